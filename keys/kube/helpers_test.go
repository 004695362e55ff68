package kube

import "os"

func writeKubeconfig(path, text string) error { return os.WriteFile(path, []byte(text), 0o600) }
