#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# cluster.sh: a real one-node Kubernetes on this machine that runs pods, for the tests that install the
# chart (deploy/cluster): etcd, kube-apiserver, kube-controller-manager, kube-scheduler and the kubelet
# (built from their Go modules, see kubebuild.sh) over containerd, runc and the CNI bridge plugin
# (Debian's packages). There is no registry: images are archives made by mkimage.sh and imported.
#
# usage: cluster.sh deps|build|images|start|stop|env|status|import ARCHIVE...
#   deps    apt-get install what the node needs when it is missing (containerd, runc, CNI plugins,
#           busybox-static, iproute2, util-linux)
#   build   deps, then the binaries (etcd and the Kubernetes commands, kubectl among them)
#   images  the pause and busybox:1.37 image archives, in $TOOLS_DIR/k8s-real-images
#   start   all of the above, then every part in the background; imports the two images; waits for a
#           Ready node and the default service account; prints the lines below
#   stop    delete every pod, stop every process start started, undo what start changed on the host
#   import  load image archives into the node's containerd (namespace k8s.io)
#   env     print the export lines: REAL_CLUSTER_KUBECONFIG, REAL_CLUSTER_KUBE_API_SERVER,
#           REAL_CLUSTER_KUBE_ADMIN_TOKEN, REAL_CLUSTER_KUBE_CA_FILE, REAL_CLUSTER_CONTAINERD_ADDRESS,
#           REAL_CLUSTER_KUBECTL (kubectl of the same version) and REAL_CLUSTER_TOOLS (this folder: the
#           tests run its mkimage.sh and `cluster.sh import`). The
#           prefix keeps them apart from the KUBECONFIG of kube-apiserver.sh, which other tests use.
#   status  exit 0 when the API server is ready and the node Ready
#
# Needs root, cgroups (v1 or v2) that can be written, overlayfs, bridge and veth links.
#
# What start changes on the host, and stop undoes: a bridge k8sreal0 holding the node's address
# (10.244.0.1/24), a veth pair per pod, a kubepods cgroup in each hierarchy. Nothing else:
#   - containerd, its shims and the kubelet run in a mount namespace of their own (held by a sleeping
#     process), so every mount of a pod stays out of the host's table;
#   - in that namespace the kernel settings the kubelet and the bridge plugin would set
#     (vm.overcommit_memory, kernel.panic, kernel.panic_on_oops, net.ipv4.ip_forward) are files bound
#     over their /proc/sys entries: the kubelet writes those files, the host keeps its values;
#   - no iptables rule: the kubelet does not make its chains, the bridge does no masquerading and there
#     is no kube-proxy. So Service addresses and cluster DNS do not work, and NetworkPolicy is not
#     enforced; there is no volume provisioner either (a test makes a hostPath PersistentVolume).
#   - this machine has no CAP_SYS_RESOURCE: runc cannot give a container an oom_score_adj below its
#     own, which the pause container asks for. containerd's restrict_oom_score_adj clamps it.
# The tests reach pods only through the API server (exec, logs, port-forward to 127.0.0.1), never by a
# pod's address, and the pods get no route off the machine: all traffic stays here.
#
# Variables (optional): MCP_EXECUTOR_TOOLS_DIR, KUBE_TEST_VERSION, KUBE_TEST_ETCD_VERSION (kubebuild.sh),
# GO. Ports: API server 16443 (on the bridge address), etcd 12379 and 12380, kubelet 20250 and its
# health 20248, controller manager 20257, scheduler 20259.
set -euo pipefail
TESTENV_NAME=cluster
. "$(dirname "$0")/lib.sh"
# shellcheck source=kubebuild.sh
. "$TESTENV_DIR/kubebuild.sh"

W="$RUN_DIR/k8s-real"
IMAGES="$TOOLS_DIR/k8s-real-images"
NODE=k8s-real
BRIDGE=k8sreal0
SUBNET=10.244.0.0/24
NODE_IP=10.244.0.1
API_PORT=16443
ETCD_PORT=12379
ETCD_PEER_PORT=12380
KUBELET_PORT=20250
KUBELET_HEALTH_PORT=20248
CM_PORT=20257
SCHEDULER_PORT=20259
TOKEN=admin-token
SERVER="https://$NODE_IP:$API_PORT"
SOCK="$W/containerd/containerd.sock"
TIMEOUT=240

deps() {
	local missing=() c
	for c in containerd ctr runc busybox ip ss unshare nsenter openssl curl; do
		command -v "$c" >/dev/null || missing+=("$c")
	done
	[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] || missing+=(cni-plugins)
	[ ${#missing[@]} -gt 0 ] || return 0
	[ "$(id -u)" = 0 ] || die "missing ${missing[*]}, and installing them needs root"
	say "installing Debian packages (missing: ${missing[*]})"
	apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends containerd runc \
		containernetworking-plugins busybox-static iproute2 util-linux openssl curl >/dev/null
}

# images: pause (the pod's infra container: kubernetes' pause.c, or a busybox sleep where there is no C
# compiler) and busybox:1.37 (Debian's static busybox with its applets linked), made once.
images() {
	mkdir -p "$IMAGES"
	local tmp
	tmp=$(mktemp -d)
	if [ ! -f "$IMAGES/pause.tar" ]; then
		if [ ! -f "$IMAGES/pause.c" ]; then
			cp "$(module_dir "k8s.io/kubernetes@$KUBE_VERSION")/build/pause/linux/pause.c" "$IMAGES/pause.c"
			chmod u+w "$IMAGES/pause.c"
		fi
		mkdir -p "$tmp/pause"
		if command -v gcc >/dev/null; then
			gcc -Os -static -DVERSION=mcp-executor-test -o "$tmp/pause/pause" "$IMAGES/pause.c"
			strip "$tmp/pause/pause" 2>/dev/null || true
		else
			mkdir -p "$tmp/pause/bin"
			cp "$(command -v busybox)" "$tmp/pause/bin/busybox"
			printf '#!/bin/busybox sh\nexec /bin/busybox sleep 2147483647\n' >"$tmp/pause/pause"
			chmod +x "$tmp/pause/pause"
		fi
		"$TESTENV_DIR/mkimage.sh" registry.k8s.io/pause:3.10 "$tmp/pause" "$IMAGES/pause.tar.part" \
			--entrypoint '["/pause"]' --user 65535:65535 >/dev/null
		mv "$IMAGES/pause.tar.part" "$IMAGES/pause.tar"
	fi
	if [ ! -f "$IMAGES/busybox.tar" ]; then
		local r="$tmp/busybox" applet
		mkdir -p "$r"/{bin,etc,dev,proc,sys,root,tmp,usr,var}
		chmod 1777 "$r/tmp"
		cp "$(command -v busybox)" "$r/bin/busybox"
		for applet in $("$r/bin/busybox" --list); do
			[ "$applet" = busybox ] || ln -s busybox "$r/bin/$applet"
		done
		printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$r/etc/passwd"
		printf 'root:x:0:\nnobody:x:65534:\n' >"$r/etc/group"
		"$TESTENV_DIR/mkimage.sh" busybox:1.37 "$r" "$IMAGES/busybox.tar.part" --cmd '["sh"]' >/dev/null
		mv "$IMAGES/busybox.tar.part" "$IMAGES/busybox.tar"
	fi
	rm -rf "$tmp"
}

import() {
	local f
	for f in "$@"; do
		ctr -a "$SOCK" -n k8s.io images import "$f" >&2
	done
}

kc() { "$KUBE_BIN_DIR/kubectl" --kubeconfig "$W/admin.kubeconfig" "$@"; }
api_ok() {
	curl -fsS --max-time 3 --cacert "$W/pki/ca.crt" -H "Authorization: Bearer $TOKEN" "$SERVER/readyz" 2>/dev/null |
		grep -qx ok
}
etcd_ok() { curl -fsS --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" 2>/dev/null | grep -q '"health":"true"'; }
containerd_ok() { ctr -a "$SOCK" version >/dev/null 2>&1; }
node_ready() {
	[ "$(kc get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}
accounts_ready() {
	kc -n default get serviceaccount default >/dev/null 2>&1 && kc -n default get configmap kube-root-ca.crt >/dev/null 2>&1
}

# run NAME CMD...: start a part in the background (pid $W/NAME.pid, log $W/logs/NAME.log); with
# IN_NODE=1 inside the node's mount namespace.
run() {
	local name=$1
	shift
	if [ "${IN_NODE:-0}" = 1 ]; then
		set -- nsenter --target "$(cat "$W/ns-holder.pid")" --mount -- "$@"
	fi
	daemon "$W/$name.pid" "$W/logs/$name.log" --dir "$W" "$@"
}

# ready WHAT PART CHECK: wait for CHECK; on failure stop everything and fail.
ready() {
	wait_until "$1" "${2:+$W/$2.pid}" "$W/logs/${2:-kubelet}.log" "$TIMEOUT" "$3" || { stop; exit 1; }
}

# pki: a CA, the API server's serving certificate (for the node address, 127.0.0.1 and the service
# names), its client certificate to the kubelet, the kubelet's serving certificate, the service-account
# key.
pki() {
	local d="$W/pki"
	mkdir -p "$d"
	openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=mcp-executor-test-cluster-ca \
		-keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
	issue() { # NAME SUBJECT EXTENSIONS
		openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$d/$1.key" -out "$d/$1.csr" 2>/dev/null
		printf '%s\n' "$3" >"$d/$1.ext"
		openssl x509 -req -in "$d/$1.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 3650 \
			-extfile "$d/$1.ext" -out "$d/$1.crt" 2>/dev/null
		rm -f "$d/$1.csr" "$d/$1.ext"
	}
	issue apiserver /CN=kube-apiserver "extendedKeyUsage=serverAuth
subjectAltName=IP:$NODE_IP,IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
	issue apiserver-kubelet-client /O=system:masters/CN=kube-apiserver-kubelet-client "extendedKeyUsage=clientAuth"
	issue kubelet "/CN=$NODE" "extendedKeyUsage=serverAuth
subjectAltName=IP:$NODE_IP,DNS:$NODE"
	openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
	chmod 600 "$d"/*.key
}

configs() {
	mkdir -p "$W"/{containerd,cni,logs,pod-logs,kubelet,manifests,sysctl}
	cat >"$W/containerd/config.toml" <<TOML
version = 2
root = "$W/containerd/root"
state = "$W/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$SOCK"
[plugins."io.containerd.internal.v1.opt"]
  path = "$W/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  netns_mounts_under_state_dir = true
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$W/containerd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$W/cni"
TOML
	cat >"$W/cni/10-mcp-executor-test.conflist" <<JSON
{"cniVersion": "0.4.0", "name": "mcp-executor-test", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$W/cni-ipam",
            "ranges": [[{"subnet": "$SUBNET", "gateway": "$NODE_IP"}]],
            "routes": [{"dst": "0.0.0.0/0"}]}}]}
JSON
	printf '%s,admin,admin-uid,system:masters\n%s,system:node:%s,node-uid,system:nodes\n' \
		"$TOKEN" "node-token-$NODE" "$NODE" >"$W/tokens.csv"
	chmod 600 "$W/tokens.csv"
	make_kubeconfig "$W/admin.kubeconfig" "$SERVER" "$W/pki/ca.crt" "$TOKEN"
	make_kubeconfig "$W/kubelet.kubeconfig" "$SERVER" "$W/pki/ca.crt" "node-token-$NODE"
	cat >"$W/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTH_PORT
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$SOCK
staticPodPath: $W/manifests
podLogsDir: $W/pod-logs
makeIPTablesUtilChains: false
failSwapOn: false
oomScoreAdj: 0
tlsCertFile: $W/pki/kubelet.crt
tlsPrivateKeyFile: $W/pki/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $W/pki/ca.crt}
authorization: {mode: Webhook}
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
resolvConf: /etc/resolv.conf
YAML
	# The values the kubelet (and the bridge plugin) want; bound over /proc/sys in the node's namespace.
	echo 1 >"$W/sysctl/vm.overcommit_memory"
	echo 10 >"$W/sysctl/kernel.panic"
	echo 1 >"$W/sysctl/kernel.panic_on_oops"
	echo 1 >"$W/sysctl/net.ipv4.ip_forward"
}

# node_namespace: the mount namespace containerd and the kubelet share, held open by a sleeping process.
node_namespace() {
	local s="$W/sysctl" binds="" k i
	for k in vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward; do
		binds="$binds mount --bind $s/$k /proc/sys/${k//.//} &&"
	done
	daemon "$W/ns-holder.pid" "$W/logs/ns-holder.log" --dir "$W" \
		unshare --mount --propagation private -- sh -c "$binds touch $W/ns-ready && exec sleep 2147483647"
	for ((i = 0; i < 100; i++)); do
		[ -f "$W/ns-ready" ] && return 0
		sleep 0.1
	done
	die "the node's mount namespace did not come up: $(cat "$W/logs/ns-holder.log")"
}

print_env() {
	echo "export REAL_CLUSTER_KUBECONFIG=$W/admin.kubeconfig"
	echo "export REAL_CLUSTER_KUBE_API_SERVER=$SERVER"
	echo "export REAL_CLUSTER_KUBE_ADMIN_TOKEN=$TOKEN"
	echo "export REAL_CLUSTER_KUBE_CA_FILE=$W/pki/ca.crt"
	echo "export REAL_CLUSTER_CONTAINERD_ADDRESS=$SOCK"
	echo "export REAL_CLUSTER_KUBECTL=$KUBE_BIN_DIR/kubectl"
	echo "export REAL_CLUSTER_TOOLS=$TESTENV_DIR"
}

start() {
	[ "$(id -u)" = 0 ] || die "the cluster needs root"
	deps
	kube_binaries
	locked images images
	if alive "$W/kube-apiserver.pid" || alive "$W/kubelet.pid" || alive "$W/ns-holder.pid"; then
		if api_ok && node_ready; then
			print_env
			return 0
		fi
		say "a half-running earlier start: stopping it first"
		stop
	fi
	ports_free "$API_PORT" "$ETCD_PORT" "$ETCD_PEER_PORT" "$KUBELET_PORT" "$KUBELET_HEALTH_PORT" "$CM_PORT" "$SCHEDULER_PORT"
	# A fresh cluster each start. No mount is left below $W: they lived in the node's namespace.
	unmount_below "$W"
	rm -rf --one-file-system "$W"
	mkdir -p "$W"
	pki
	configs
	ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
	ip addr show dev "$BRIDGE" | grep -q "inet $NODE_IP/" || ip addr add "$NODE_IP/24" dev "$BRIDGE"
	ip link set "$BRIDGE" up
	node_namespace

	IN_NODE=1 run containerd containerd --config "$W/containerd/config.toml"
	ready containerd containerd containerd_ok
	import "$IMAGES/pause.tar" "$IMAGES/busybox.tar"

	run etcd "$ETCD_BIN" --name=default --data-dir="$W/etcd-data" \
		--listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
		--listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-cluster="default=http://127.0.0.1:$ETCD_PEER_PORT" --log-level=warn
	ready etcd etcd etcd_ok

	run kube-apiserver "$KUBE_BIN_DIR/kube-apiserver" \
		--etcd-servers="http://127.0.0.1:$ETCD_PORT" \
		--bind-address="$NODE_IP" --advertise-address="$NODE_IP" --secure-port="$API_PORT" \
		--tls-cert-file="$W/pki/apiserver.crt" --tls-private-key-file="$W/pki/apiserver.key" \
		--client-ca-file="$W/pki/ca.crt" \
		--kubelet-client-certificate="$W/pki/apiserver-kubelet-client.crt" \
		--kubelet-client-key="$W/pki/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority="$W/pki/ca.crt" --kubelet-preferred-address-types=InternalIP \
		--service-account-key-file="$W/pki/sa.key" --service-account-signing-key-file="$W/pki/sa.key" \
		--service-account-issuer=https://kubernetes.default.svc \
		--authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
		--token-auth-file="$W/tokens.csv" --service-cluster-ip-range=10.96.0.0/24 --allow-privileged=true
	ready kube-apiserver kube-apiserver api_ok

	run kube-controller-manager "$KUBE_BIN_DIR/kube-controller-manager" \
		--kubeconfig="$W/admin.kubeconfig" --bind-address=127.0.0.1 --secure-port="$CM_PORT" \
		--service-account-private-key-file="$W/pki/sa.key" --root-ca-file="$W/pki/ca.crt" \
		--use-service-account-credentials=false --leader-elect=false --cluster-name=mcp-executor-test
	run kube-scheduler "$KUBE_BIN_DIR/kube-scheduler" \
		--kubeconfig="$W/admin.kubeconfig" --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" --leader-elect=false
	IN_NODE=1 run kubelet "$KUBE_BIN_DIR/kubelet" --config="$W/kubelet.yaml" --kubeconfig="$W/kubelet.kubeconfig" \
		--root-dir="$W/kubelet" --hostname-override="$NODE" --node-ip="$NODE_IP" --v=1
	ready "the node (kubelet)" kubelet node_ready
	ready "the default service account (controller manager)" kube-controller-manager accounts_ready
	say "node $NODE Ready, API server $SERVER, state in $W"
	print_env
}

# unmount_below DIR: a safety net; the host should hold no mount below DIR, deepest first.
unmount_below() {
	local m
	awk -v p="$1/" 'index($5, p) == 1 {print $5}' /proc/self/mountinfo | sort -r | while read -r m; do
		umount -l "$m" 2>/dev/null || true
	done
}

stop() {
	local ctr=(ctr -a "$SOCK" -n k8s.io) holder="" ns="" p t h i
	# First the kubelet takes the pods down itself (network teardown, unmounts), for up to 10 s.
	if alive "$W/kubelet.pid" && api_ok; then
		kc delete pods --all-namespaces --all --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
		for ((i = 0; i < 20; i++)); do
			[ -z "$("${ctr[@]}" tasks ls -q 2>/dev/null)" ] && break
			sleep 0.5
		done
		kc delete node "$NODE" --wait=false >/dev/null 2>&1 || true
	fi
	for p in kubelet kube-scheduler kube-controller-manager kube-apiserver etcd; do
		stop_pid "$W/$p.pid"
	done
	if alive "$W/containerd.pid"; then
		for t in $("${ctr[@]}" tasks ls -q 2>/dev/null); do
			"${ctr[@]}" tasks kill -s KILL "$t" >/dev/null 2>&1 || true
		done
		sleep 1
	fi
	if alive "$W/ns-holder.pid"; then
		holder=$(cat "$W/ns-holder.pid")
		ns=$(readlink "/proc/$holder/ns/mnt" || true)
	fi
	stop_pid "$W/containerd.pid"
	# What is left of ours: processes in the node's mount namespace (shims) or in a kubepods cgroup.
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		[ "$p" != "$holder" ] || continue
		if { [ -n "$ns" ] && [ "$(readlink "/proc/$p/ns/mnt" 2>/dev/null)" = "$ns" ]; } ||
			grep -qE ':/kubepods(/|\.slice|$)' "/proc/$p/cgroup" 2>/dev/null; then
			kill -9 "$p" 2>/dev/null || true
		fi
	done
	stop_pid "$W/ns-holder.pid"
	unmount_below "$W"
	ip link del "$BRIDGE" 2>/dev/null || true
	for h in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods /sys/fs/cgroup/kubepods.slice; do
		if [ -d "$h" ]; then find "$h" -depth -type d -exec rmdir {} + 2>/dev/null || true; fi
	done
}

case "${1:-}" in
deps) deps ;;
build) deps && kube_binaries ;;
images) locked images images ;;
start) start ;;
stop) stop ;;
import) shift; import "$@" ;;
env) print_env ;;
status) alive "$W/kube-apiserver.pid" && alive "$W/kubelet.pid" && api_ok && node_ready ;;
*) usage "$0 deps|build|images|start|stop|env|status|import ARCHIVE..." ;;
esac
