// Package cluster holds the tests that run the chart on a real single-node Kubernetes (pods, kubelet,
// containerd) started by scripts/testenv/cluster.sh: the executor's image is made from the
// static binary with scripts/testenv/mkimage.sh and imported into the node, the chart is installed with
// helm, and every check reaches the pod only through the API server (kubectl exec, logs, port-forward to
// 127.0.0.1). The tests carry the build tag integration; scripts/test.sh starts the cluster for them
// and stops it afterwards. podtool is the small tool server they put into the image.
package cluster
