#!/usr/bin/env bash
# mkimage.sh: an OCI image archive of one layer, made from a folder with tar and sha256sum alone: no
# Docker, no registry, no network. cluster.sh import loads it into the test cluster's containerd.
#
# usage: mkimage.sh NAME:TAG ROOT OUT.tar [--entrypoint JSON] [--cmd JSON] [--user UID:GID] [--env JSON]
#   ROOT      the folder that becomes the image's file system
#   JSON      a JSON list, e.g. --entrypoint '["/usr/local/bin/mcp-executor"]' --env '["PATH=/bin"]'
# Prints the image's full name (a short name such as busybox:1.37 becomes docker.io/library/busybox:1.37,
# the name containerd and the kubelet look it up by).
#
# The layer is reproducible: names sorted, owner root, every time stamp 0, so one folder always makes the
# same digests.
set -euo pipefail

[ $# -ge 3 ] || { echo "usage: $0 NAME:TAG ROOT OUT.tar [--entrypoint JSON] [--cmd JSON] [--user U:G] [--env JSON]" >&2; exit 2; }
name=$1 root=$2 out=$3
shift 3
entrypoint=null cmd=null user="" env='["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]'
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || { echo "mkimage: $1 needs a value" >&2; exit 2; }
	case $1 in
	--entrypoint) entrypoint=$2 ;;
	--cmd) cmd=$2 ;;
	--user) user=$2 ;;
	--env) env=$2 ;;
	*) echo "mkimage: unknown option $1" >&2; exit 2 ;;
	esac
	shift 2
done
[ -d "$root" ] || { echo "mkimage: $root is not a folder" >&2; exit 2; }

case $name in
*.*/* | *:*/* | localhost/*) ref=$name ;; # names its registry already
*/*) ref=docker.io/$name ;;
*) ref=docker.io/library/$name ;;
esac
tag=${ref##*:}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/blobs/sha256"

# put FILE: move FILE into the blob store under its digest; print "DIGEST SIZE".
put() {
	local digest size
	digest=$(sha256sum "$1" | cut -d' ' -f1)
	size=$(stat -c %s "$1")
	mv "$1" "$work/blobs/sha256/$digest"
	echo "$digest $size"
}
reproducible_tar() { tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 "$@"; }

reproducible_tar -C "$root" -cf "$work/layer" .
read -r layer layer_size < <(put "$work/layer")

printf '{"architecture":"amd64","os":"linux","config":{"User":"%s","Env":%s,"Entrypoint":%s,"Cmd":%s,"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
	"$user" "$env" "$entrypoint" "$cmd" "$layer" >"$work/config"
read -r config config_size < <(put "$work/config")

printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
	"$config" "$config_size" "$layer" "$layer_size" >"$work/manifest"
read -r manifest manifest_size < <(put "$work/manifest")

printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
	"$manifest" "$manifest_size" "$ref" "$tag" >"$work/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' >"$work/oci-layout"
reproducible_tar -C "$work" -cf "$out" oci-layout index.json blobs
echo "$ref"
