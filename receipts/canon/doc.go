// Package canon reads and writes the small formats every Provared record is
// made of: canonical JSON as the format narrows RFC 8785 (objects, arrays,
// strings and whole numbers 0 … 2^53−1, nested at most 8 deep, written in
// exactly one way), full RFC 8785 of arbitrary JSON, strict base64url,
// fingerprints, times, ids and character counts.
//
// Canonical values are plain Go values: map[string]any (object), []any
// (array), string and int64. Format faults are *problem.Error values
// carrying the reference's code.
package canon

// MaxSafeInt is the largest whole number canonical JSON holds (2^53−1).
const MaxSafeInt = 1<<53 - 1

// MaxDepth is the deepest nesting of containers canonical JSON allows.
const MaxDepth = 8

// Problem codes this package gives.
const (
	CodeNotCanonical = "payload-not-canonical"
	CodeBadBase64url = "bad-base64url"
	CodeBadField     = "bad-field"
)
