# shellcheck shell=bash
# kubebuild.sh: building etcd and the Kubernetes binaries from their Go modules. Sourced by
# kube-apiserver.sh and cluster.sh after lib.sh.
#
# Variables (optional): KUBE_TEST_VERSION (k8s.io/kubernetes, default v1.37.2; its staging modules are
# taken at the matching v0.N.M), KUBE_TEST_ETCD_VERSION (go.etcd.io/etcd/server/v3, default v3.7.0, the
# one kubernetes' go.mod names).

KUBE_VERSION="${KUBE_TEST_VERSION:-v1.37.2}"
ETCD_VERSION="${KUBE_TEST_ETCD_VERSION:-v3.7.0}"
KUBE_BIN_DIR="$TOOLS_DIR/kubernetes-$KUBE_VERSION"
ETCD_BIN="$TOOLS_DIR/etcd-$ETCD_VERSION/etcd"
# What the real cluster runs, and kubectl for the tests that drive it.
KUBE_COMMANDS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)

# build_etcd: etcd is a library module with no main of its own at this path; a two-line main around
# etcdmain.Main builds it.
build_etcd() {
	[ -x "$ETCD_BIN" ] && return 0
	local src
	src="$(dirname "$ETCD_BIN")/src"
	say "building etcd $ETCD_VERSION (about 1 to 2 min on 2 cores)"
	rm -rf "$src"
	mkdir -p "$src"
	printf 'module etcdbin\n\ngo 1.26\n' >"$src/go.mod"
	cat >"$src/main.go" <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
	(cd "$src" && go_build_env "$GO" get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" &&
		go_build_env "$GO" build -ldflags "-s -w" -o "$ETCD_BIN.part" .)
	mv "$ETCD_BIN.part" "$ETCD_BIN"
	rm -rf "$src"
}

# build_kube: the commands of KUBE_COMMANDS not yet in KUBE_BIN_DIR, in one `go build` from one copy of
# k8s.io/kubernetes. The module zip has a go.work and `replace k8s.io/x => ./staging/src/k8s.io/x` lines
# for folders it does not hold: those go, and each k8s.io/x required at v0.0.0 is required at the
# published v0.N.M instead. The version variables are stamped as the release build does, so that
# `kubectl version` and the API server's /version say v1.N.M. pause.c (the pod's infra container) is kept
# from the same source for the cluster's pause image.
build_kube() {
	local want=() c
	for c in "${KUBE_COMMANDS[@]}"; do
		[ -x "$KUBE_BIN_DIR/$c" ] || want+=("./cmd/$c")
	done
	[ ${#want[@]} -gt 0 ] || return 0
	local src="$KUBE_BIN_DIR/src" out="$KUBE_BIN_DIR/.part" staging minor ld pkg
	staging="v0.${KUBE_VERSION#v1.}"
	minor="${KUBE_VERSION#v1.}"
	minor="${minor%%.*}"
	say "building ${want[*]} $KUBE_VERSION (all five: 15 to 25 min on 2 cores from an empty Go cache)"
	copy_module "k8s.io/kubernetes@$KUBE_VERSION" "$src"
	rm -f "$src/go.work" "$src/go.work.sum"
	sed -i -E \
		-e '/=>[[:space:]]*\.\/staging\//d' \
		-e "s#^([[:space:]]*k8s\.io/[A-Za-z0-9._-]+) v0\.0\.0([[:space:]]*//[[:space:]]*indirect)?[[:space:]]*\$#\1 $staging\2#" \
		"$src/go.mod"
	if grep -qE '=>[[:space:]]+\./' "$src/go.mod"; then
		die "a replace to a local folder is left in kubernetes' go.mod: $(grep -E '=>[[:space:]]+\./' "$src/go.mod")"
	fi
	ld="-s -w"
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ld="$ld -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
	done
	rm -rf "$out"
	mkdir -p "$out"
	(cd "$src" && go_build_env "$GO" build -ldflags "$ld" -o "$out/" "${want[@]}")
	mkdir -p "$TOOLS_DIR/k8s-real-images"
	cp "$src/build/pause/linux/pause.c" "$TOOLS_DIR/k8s-real-images/pause.c"
	mv "$out"/* "$KUBE_BIN_DIR/"
	rmdir "$out"
	rm -rf "$src"
}

# kube_binaries: etcd and every Kubernetes command, built where missing (one build at a time).
kube_binaries() {
	locked build-etcd build_etcd
	locked build-kubernetes build_kube
}

# make_kubeconfig FILE SERVER CA TOKEN: a kubeconfig for a bearer token, mode 0600.
make_kubeconfig() {
	cat >"$1" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: $2
    certificate-authority: $3
users:
- name: test
  user:
    token: $4
contexts:
- name: test
  context: {cluster: test, user: test, namespace: default}
current-context: test
YAML
	chmod 600 "$1"
}
