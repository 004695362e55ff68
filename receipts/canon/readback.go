package canon

// ReadBack is the value Parse(Marshal(v)) gives, for a v Marshal has
// written: fresh objects and lists (map[string]any, []any), whole numbers
// as int64, texts as they are; made without writing or reading any text.
// It is for a value this process has just written, which it would
// otherwise read again only to get it in the form a reader gets. Call it
// only on a v Marshal took: for any other it panics.
func ReadBack(v any) any {
	switch x := v.(type) {
	case string, int64:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		return int64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = ReadBack(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = ReadBack(e)
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = e
		}
		return out
	}
	panic("canon.ReadBack: a value Marshal does not write")
}
