// Package wire reads and writes the executor's JSON-RPC lines as raw bytes.
//
// Every message that passes through the executor is kept exactly as it was
// written: this package checks a line ([Inspect]), finds the parts the
// executor acts on (the id, params, result, error and values inside them by
// JSON Pointer) as byte spans, and edits a line only where it must (the id,
// [SpliceID]; one _meta member, [SetMeta]; the tools of a tools/list result,
// [FilterTools]), leaving every other byte, numbers above all, as it was.
//
// # What a line must be
//
// A line is accepted by [Inspect] when it is valid UTF-8, exactly one JSON
// object (RFC 8259 grammar, whitespace around it allowed), names no member
// twice in any object at any depth (names compared after decoding escapes),
// holds no number whose magnitude exceeds 2^53−1, and is a JSON-RPC 2.0
// request, notification or response.
//
// Numbers: a number is refused when its absolute value is above
// 9,007,199,254,740,991, however it is written: 9007199254740992,
// 9.007199254740992e15, 1e300 and 9007199254740991.5 are all refused (above
// 2^53 a binary64 reader cannot hold a fraction and two readers would hold
// the value differently). Numbers within that range are accepted in any JSON
// notation (0.5, 1e-9, 2.0E3).
//
// Ids: a request's id is a string or a whole number written as plain digits
// (0 … 2^53−1, no sign, fraction or exponent). A response's id may also be
// null, but only in an error response.
//
// Faults are *[Error] values carrying the JSON-RPC code the executor answers
// with: [CodeParse] (-32700) for bytes that are not UTF-8 or not JSON, and
// [CodeInvalidRequest] (-32600) for JSON that is not an acceptable message.
// Byte slices in a [Message] alias the inspected line.
package wire
