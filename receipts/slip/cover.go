package slip

import (
	"crypto/sha256"
	"fmt"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
)

// Covered fields (format description, section 24): the narrowed form of
// Selective Disclosure for JWTs (RFC 9901) a slip may use. A covered field
// is taken out of the signed content and the fingerprint of its
// "disclosure" stands in an "_sd" list of the same object; the disclosure
// (base64url of the canonical JSON [salt, name, value]) reveals it.

// MaxDisclosures is the most disclosures one record may come with.
const MaxDisclosures = 64

const maxCoverDepth = 12

func coverInvalid(format string, a ...any) *problem.Error {
	return problem.New("cover-invalid", "a covered field is not as its standard sets out: %s", fmt.Sprintf(format, a...))
}

// place records, for one object that held an "_sd" list, how many fields
// stay covered there and which were revealed.
type place struct {
	covered  int
	revealed []string
}

type disclosure struct {
	parts []any
	used  bool
}

// DisclosureDigest is the fingerprint of a disclosure: SHA-256 over the
// characters of its base64url text.
func DisclosureDigest(d string) string {
	sum := sha256.Sum256([]byte(d))
	return canon.B64(sum[:])
}

// uncover puts back what the disclosures reveal (RFC 9901, section 7.1,
// steps 3 to 5) with a slip's narrowing: no covered list item, and every
// disclosure canonical. given is the disclosures as handed over (any value;
// only a list of at most 64 texts is accepted).
func uncover(payload any, given any) (content any, places map[string]*place, named bool, err error) {
	byDigest, err := readDisclosures(given)
	if err != nil {
		return nil, nil, false, err
	}
	u := &uncoverer{byDigest: byDigest, seen: map[string]bool{}, places: map[string]*place{}}
	content, err = u.walk(payload, "", 0)
	if err != nil {
		return nil, nil, false, err
	}
	for _, d := range byDigest {
		if !d.used {
			return nil, nil, false, coverInvalid("a disclosure does not belong to this record")
		}
	}
	return content, u.places, u.named, nil
}

// readDisclosures reads the disclosures handed over, by their digests.
func readDisclosures(given any) (map[string]*disclosure, error) {
	list, ok := given.([]any)
	if !ok || len(list) > MaxDisclosures {
		return nil, coverInvalid("the disclosures must be a list of at most 64")
	}
	byDigest := map[string]*disclosure{}
	for _, item := range list {
		d, ok := item.(string)
		if !ok || len(d) == 0 || len(d) > 87384 {
			return nil, coverInvalid("a disclosure must be text in base64url")
		}
		raw, err := canon.UnB64(d)
		var parsed any
		if err == nil {
			parsed, err = canon.Parse(raw)
		}
		if err != nil {
			return nil, coverInvalid("a disclosure is not json in the canonical form, written in base64url")
		}
		parts, ok := parsed.([]any)
		if !ok || (len(parts) != 2 && len(parts) != 3) {
			return nil, coverInvalid("a disclosure must be a list of a salt and a value, or of a salt, a name and a value")
		}
		if _, ok := parts[0].(string); !ok {
			return nil, coverInvalid("a disclosure must be a list of a salt and a value, or of a salt, a name and a value")
		}
		digest := DisclosureDigest(d)
		if _, dup := byDigest[digest]; dup {
			return nil, coverInvalid("a disclosure is handed over twice")
		}
		byDigest[digest] = &disclosure{parts: parts}
	}
	return byDigest, nil
}

// uncoverer walks a signed content, putting back the fields its disclosures reveal.
type uncoverer struct {
	byDigest map[string]*disclosure
	seen     map[string]bool   // the fingerprints met so far in the content
	places   map[string]*place // by path, the objects that hold an "_sd" list
	named    bool              // "_sd_alg" was at the top
}

// once returns the disclosure of a fingerprint in the content (nil when none was handed over), refusing
// a fingerprint met before.
func (u *uncoverer) once(digest any) (*disclosure, error) {
	s, ok := digest.(string)
	if !ok || len(s) != 43 || !canon.IsFingerprint(s) {
		return nil, coverInvalid("a fingerprint in the content is not a sha-256 fingerprint in base64url")
	}
	if u.seen[s] {
		return nil, coverInvalid("the same fingerprint appears twice in the content")
	}
	u.seen[s] = true
	return u.byDigest[s], nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func (u *uncoverer) walk(v any, path string, depth int) (any, error) {
	if depth > maxCoverDepth {
		return nil, coverInvalid("the content is nested too deeply")
	}
	switch x := v.(type) {
	case []any:
		out := make([]any, 0, len(x))
		for i, item := range x {
			if m, ok := item.(map[string]any); ok && len(m) == 1 {
				if _, dots := m["..."]; dots {
					return nil, coverInvalid("an item of a list may not be covered in this kind of record")
				}
			}
			w, err := u.walk(item, fmt.Sprintf("%s[%d]", path, i), depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, w)
		}
		return out, nil
	case map[string]any:
		return u.walkObject(x, path, depth)
	default:
		return v, nil
	}
}

func (u *uncoverer) walkObject(x map[string]any, path string, depth int) (any, error) {
	out := make(map[string]any, len(x))
	for name, member := range x {
		if name == "_sd" {
			continue
		}
		if name == "_sd_alg" {
			if alg, ok := member.(string); path != "" || !ok || alg != "sha-256" {
				return nil, coverInvalid(`"_sd_alg" may stand only at the top, and must be "sha-256"`)
			}
			u.named = true
			continue
		}
		w, err := u.walk(member, join(path, name), depth+1)
		if err != nil {
			return nil, err
		}
		out[name] = w
	}
	sd, has := x["_sd"]
	if !has {
		return out, nil
	}
	digests, ok := sd.([]any)
	if !ok {
		return nil, coverInvalid(`"_sd" must be a list of fingerprints`)
	}
	p := &place{}
	for _, digest := range digests {
		found, err := u.once(digest)
		if err != nil {
			return nil, err
		}
		if found == nil {
			p.covered++
			continue
		}
		name, err := u.reveal(out, found, path, depth)
		if err != nil {
			return nil, err
		}
		p.revealed = append(p.revealed, name)
	}
	u.places[path] = p
	return out, nil
}

// reveal puts the field a disclosure names into out, the object at path, and returns its name.
func (u *uncoverer) reveal(out map[string]any, found *disclosure, path string, depth int) (string, error) {
	if len(found.parts) != 3 {
		return "", coverInvalid("the disclosure of a named field must hold a salt, a name and a value")
	}
	name, ok := found.parts[1].(string)
	if !ok || name == "_sd" || name == "..." || name == "_sd_alg" {
		return "", coverInvalid("a disclosure names a field that may not be covered")
	}
	if _, there := out[name]; there {
		return "", coverInvalid("a disclosure names a field that is already there")
	}
	found.used = true
	w, err := u.walk(found.parts[2], join(path, name), depth+1)
	if err != nil {
		return "", err
	}
	out[name] = w
	return name, nil
}
