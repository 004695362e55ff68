// Package redact masks secret-looking values wherever the executor shows a
// tool call's arguments or what a client or a tool server sent: approval
// prompts and queue files, the page, reports, logs and errors. The tool
// server always gets the arguments unchanged; nothing here touches them.
//
// # Tokens
//
// A secret, or the secret part of a longer text, becomes
//
//	[REDACTED:<kind>:<tag>]
//
// where kind names the detector ([Kinds]: "key" for a value under a secret
// name, "split" for a member holding part of a secret, "custom" for an
// expression of the settings) and tag is the first 8 hexadecimal
// characters of SHA-256(salt || secret). The salt is 32 random bytes the
// caller keeps in the copy, so an auditor who holds the original value can
// show it was that value ([Verify], [VerifyJSON]) while whoever reads only
// the redacted text cannot test guesses. The form of tokens and of their
// tags has not changed since the first copies were written.
//
// Text already redacted stays as it is: tokens are never scanned, and the
// scan is repeated until it finds nothing more, so redacting twice gives
// the same as redacting once (for text, JSON and names alike).
//
// # What is redacted
//
// In a JSON document ([Redactor.JSON]): a value under a secret name (see
// below) is replaced whole, whatever its type (a non-text value is
// fingerprinted in its RFC 8785 form); null and "" stay as they are. Every
// other string is scanned by the detectors and its secret parts replaced,
// in the context of the whole call (an AWS key id anywhere in the call is
// context for a secret in any member); then the split check runs over the
// strings (below). A member name is shown by [Redactor.Name]. Numbers,
// true and false are kept, and so is member order.
//
// Free text ([Redactor.Text]) is scanned by the detectors, among them the
// "name=value" and "name: value" pairs whose name is a secret name: in
// prose, env lines, query strings, connection strings (AccountKey=…;),
// JSON or YAML held as text. A name may be two words ("New password:").
// An HTTP header's value (Authorization, Proxy-Authorization, Cookie,
// Set-Cookie) after ":" runs to the end of the line, past its scheme
// (Bearer, Basic, Token, …), which stays.
//
// # Secret names
//
// Names are compared by [FoldName]: case folded as a case-insensitive
// decoder folds it ("ſ" is "s", the Kelvin sign is "k"), every character
// that is not a letter or a digit dropped, so that "secretAccessKey",
// "SECRET_ACCESS_KEY", "secret-access.key" and "secret access key" are one
// name, and no zero-width character or separator hides one. The rule
// ([IsSecretName]) reads what the name ends in, for in a compound name the
// last word says what the value is: a db_password is a password, a
// tokenCount is a count.
//
//  1. Carrier words and digits at the end are set aside: value, string,
//     text, data, raw, plain, b64, base64, hex, encoded, bytes, json, pem,
//     new, old, current, next, v… (secretValue, password_b64, apiKeyV2,
//     SecretString, token2).
//  2. The name is a secret name when what is left ends in a secret word:
//     password, passwd, passphrase, passcode, pwd, pass, passwordhash, otp,
//     secret, token, credential(s), creds, apikey, authorization, auth,
//     cookie(s), or a key by what it is: privatekey, privatekeyid,
//     secretkey, accesskey, accountkey, sharedaccesskey,
//     sharedaccesssignature, sessionkey, masterkey, signingkey,
//     encryptionkey, subscriptionkey, hmackey, appkey. This takes in the
//     providers' own members: AWS (secretAccessKey, aws_secret_access_key,
//     AWS_SECRET, sessionToken, aws_session_token), Azure (clientSecret,
//     AccountKey, SharedAccessKey, SharedAccessSignature,
//     Ocp-Apim-Subscription-Key), GCP (private_key, private_key_id,
//     client_secret), and GITHUB_TOKEN, x-api-key, set-cookie and the like.
//  3. "sig" (an Azure SAS signature), "pw", X-Amz-Signature and
//     X-Goog-Signature (presigned URLs) are secret names only whole.
//  4. Not secret: a name that ends in one of bypass, compass, encompass,
//     surpass, trespass, overpass, underpass, oauth.
//
// So these are shown, though they hold a secret word: tokenCount,
// max_tokens, token_type, tokenizer, tokens, secretary, secretName,
// secrets, passwordPolicy, passwordless, passwords, passport, author,
// authType, publicKey, keyId, accessKeyId, key, sortKey, cookieName,
// signature. Hidden though harmless, knowingly: pagination and
// cancellation tokens (pageToken, NextToken, cancellationToken), a
// graphics renderPass, and "pwd" as a shell's working folder: each ends in
// a secret word as a password does, and the cost of showing a password is
// the greater.
//
// In an object that names a user (a member ending in user, username,
// userid, login, email or principal), the members named pin, key, pw and
// pword are secret too ({"user": "bob", "pin": "1234"}).
//
// Options.ExtendKeys are compared folded alike and match names that end
// in them (client_ref takes in my_client_ref and clientRefValue, not
// client_refs). A name that is a token is never a secret name.
//
// # Values
//
// Known forms ([Kinds]): PEM private key blocks, JWTs, Anthropic, OpenAI,
// GitHub, Slack and Stripe keys, Google API keys and OAuth tokens (ya29.),
// Entra ID client secrets (…Q~…), AWS key ids, passwords in URLs, bearer
// and basic credentials. A known prefix may follow "_" or "-" (a tool
// named fetch_ghp_… holds a token), never a letter or a digit.
//
// AWS secrets (40 characters of letters, digits, "+" and "/") are found
// three ways: after a name saying aws…secret; beside an AWS key id, in the
// same text or anywhere in the call (then any such run with both cases and
// a digit, "+" or "/" is taken); and alone when the run looks random by a
// floor of 4.0 bits per character. AWS's documentation example
// (…EXAMPLEKEY) reads as words, so alone it is shown.
//
// # Random-looking values
//
// The entropy detector judges runs of the base64 alphabets (letters,
// digits, "+", "/", "_", "-", up to two "=" after). A run is random-looking
// when it
//
//   - is at least [MinRandomLen] (24) characters long;
//   - holds an upper-case letter, a lower-case letter and a digit (this
//     leaves out base32, numbers and words);
//   - is not only hexadecimal digits and dashes: UUIDs, git commits and
//     digests are ids an auditor follows, and hexadecimal secrets are
//     found by their names and prefixes instead;
//   - has at least [EntropyFloor] bits of Shannon entropy per character:
//     3.85 at 24 characters, 4.15 at 32, 4.4 at 40, 4.85 at 64, 5.3 at 128,
//     5.5 from 256 on (about the first percentile of random base62 and
//     base64 strings of each length);
//   - has less than 60% of its letters in camel-case words of four letters
//     or more (identifiers are words: rewriteValue, Masked, Merging).
//
// Not judged: a run that decodes from base64 to readable text (the base64
// detector judges its text) or to a file of a known kind (PNG, JPEG, GIF,
// PDF, ZIP, gzip, an SSH public key, …); the body of a PEM block that is
// not a private key (certificates, public keys); a digest after its label
// (sha256-, sha384-, sha256:, md5:) and what follows ";base64," in a data
// URL; Stripe's publishable keys (pk_live_, pk_test_), public by design. A
// path's random part ("/v1/files/<id>/raw", "build_<id>") is redacted
// alone when the parts around it are path-like.
//
// Measured (TestRandomStringsFound, TestIdentifiersAreNotRandom,
// TestNonSecrets): of random base62 strings it misses about 6% at 24
// characters, 3% at 32, 1.4% at 40, under 1% at 64 and none at 128; of the
// 2,536 declared names of 24 characters or more in the Go distribution's
// hand-written sources it hides 9 (0.35%, names mixing acronyms and
// digits such as oidSignatureSHA256WithRSA). Random ids cannot be told
// from secrets: a Stripe charge id or a long nanoid is shown by its tag,
// which still groups it with itself.
//
// # Encoded secrets
//
// A base64 run (either alphabet, padded or not, 16 characters or more;
// whole, or its parts between "/") or a hexadecimal one (an even number of
// 16 digits or more) that decodes to readable text is scanned again by
// every detector; when they find a secret in it, the run is redacted whole
// (kinds base64, hex). Text with %XX escapes is decoded and scanned again;
// a secret found there is redacted where it stands, escapes and all, by
// the kind of the detector that found it. Decoding goes at most three
// levels deep (base64 of base64 of URL-encoded text). A run that decodes
// to text holding no secret is shown: an encoded value is redacted exactly
// when its text would be, so a short password encoded is no more found
// than in the clear.
//
// # Secrets split across members
//
// After each string of a call is redacted, consecutive strings in
// document order (members and array elements alike, across nesting; values
// under secret names are left out) are joined, two at a time and three at
// a time when the middle one is at most 64 bytes, reading at most 256
// bytes of each outer one beside the join. A secret the detectors find in
// the joined text but not in its pieces alone is a split: each string its
// bytes stand in becomes [REDACTED:split:<tag of that string>]. This
// catches a known prefix and its body in two or three members ("ghp_…"
// and the rest, "AKIA" and the rest, "sk-", "ant-", "api03-…"), a scheme
// and its credential ("Bearer " then the token: only the token's member is
// redacted), a URL's user and password ("postgres://app:" then
// "s3cr3t@db"), base64 cut in two, and a pair whose name and separator are
// a member alone ({"k": "password=", "v": "hunter2"}, not "Reset
// password:" followed by prose). An AWS key id in one member and its
// secret in another are caught as above.
//
// Not caught: halves that only together look random (the entropy detector
// does not join: two random ids side by side would look like one secret);
// a secret cut over four members or more, or over members that are not
// consecutive; halves joined by a separator the detectors do not expect
// (a space inside a token); the part of a secret more than 256 bytes from
// the join (a split PEM block: its BEGIN line alone is found, in its own
// member, as a private key).
//
// # Names and ids
//
// [Redactor.Name] is the shown form of a tool name, a member name, a
// JSON-RPC id ([Redactor.ID]) or any name: the name itself when no
// detector finds a secret in it, else a token of its kind whose tag is of
// the whole name. It uses the salted tag rather than a bare hash such as
// sha256:<first 12 of base64url>: a bare hash of a short secret can be
// tested by guessing, the salted one cannot without the salt; it is the
// form every other redacted value has, so one reader (ParseToken) and one
// check (Verify, with the whole name as original) serve both; and it is as
// stable as the salt, which the copy keeps across restarts, so log lines,
// report rows and spans of one name still group together.
//
// # Terminals
//
// [Printable] escapes what a terminal or a log reader could act on
// (controls, escape sequences, bidirectional overrides, zero-width and
// other format characters, line separators, bytes that are not UTF-8);
// [PrintableJSON] does the same for JSON text with JSON escapes.
//
// # Cost
//
// BenchmarkJSON16K redacts 16 KiB arguments objects beside the redactor
// as it was before these detectors (its floor, kept in legacy_test.go):
// one long text about 0.3-0.45 times the floor's time (the pairs are now
// read by hand, not by one expression), 788 short members about 2 times,
// 53 records of URLs, ids, paths, digests and base64 about 4-5 times (the
// split check reads each pair of neighbours again). Redaction runs only where a
// value is shown, never on a call's way to the server.
package redact
