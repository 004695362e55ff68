package kube

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// ManifestNeeded is returned instead of writing a Secret: the executor only
// reads Secrets, so a value it made (a new key set or copy key) must be put
// in place by the user. Manifest is a Secret manifest holding the value
// (under stringData); apply it with
//
//	kubectl apply --server-side -f <file>
//
// which, for a Secret that already exists, adds the key and leaves the
// Secret's other keys alone. Error() never holds the value.
type ManifestNeeded struct {
	Namespace, Name, Key string
	SecretExists         bool
	Manifest             []byte // YAML; holds the secret value: write it only where the user asked
}

func (m *ManifestNeeded) Error() string {
	what := "does not exist"
	if m.SecretExists {
		what = fmt.Sprintf("has no key %q", m.Key)
	}
	return fmt.Sprintf("Secret %s/%s %s and the executor does not write Secrets: apply the generated manifest (kubectl apply --server-side -f <file>) and start again", m.Namespace, m.Name, what)
}

// SecretManifest returns a Secret manifest (YAML) with value under key in
// stringData.
func SecretManifest(namespace, name, key string, value []byte) []byte {
	m := map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"type":       "Opaque",
		"metadata": map[string]any{
			"name":      name,
			"namespace": namespace,
			"labels":    map[string]any{"app.kubernetes.io/managed-by": "mcp-executor"},
		},
		"stringData": map[string]any{key: string(value)},
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		panic("kube: marshalling a Secret manifest: " + err.Error()) // plain strings cannot fail
	}
	return b
}
