package kube

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// ManifestNeeded is returned instead of writing a Secret: the executor only
// reads Secrets, so a value it made (a new key set or copy key) must be put
// in place by the user. Manifest is a Secret manifest holding the value
// (under stringData); apply it with ApplyCommand:
//
//	kubectl apply --server-side --field-manager=mcp-executor.<key> -f <file>
//
// Server-side apply adds the key to a Secret that exists and leaves its
// other keys alone; a field manager of its own per key keeps each key's
// ownership apart, so no later apply can claim to own (and drop) another
// key. Error() never holds the value.
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
	return fmt.Sprintf("Secret %s/%s %s and the executor does not write Secrets: apply the generated manifest (%s) and start again", m.Namespace, m.Name, what, m.ApplyCommand("<file>"))
}

// FieldManager is the server-side apply field manager for this key.
func (m *ManifestNeeded) FieldManager() string { return "mcp-executor." + m.Key }

// ApplyCommand is the kubectl command that applies the manifest saved as file.
func (m *ManifestNeeded) ApplyCommand(file string) string {
	return "kubectl apply --server-side --field-manager=" + m.FieldManager() + " -f " + file
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
