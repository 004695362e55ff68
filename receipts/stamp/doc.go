// Package stamp is the outside time-stamp of a seal or a cancellation: an
// RFC 3161 "TimeStampToken" from a time-stamp service (format description,
// section 21.2).
//
// It has three parts, each usable alone:
//
//   - [Check] reads a token strictly and checks it as the format's checker
//     does: strict DER throughout, what it stamps (SHA-256 of exactly the
//     fingerprint given), the signed attributes, the signing certificate
//     named by its fingerprint and carried in the token, the signature with
//     that certificate's key (RSA, ECDSA on P-256 and P-384, Ed25519), the
//     certificate's dates, the stated accuracy and critical extensions. A
//     service is trusted only by the SHA-256 fingerprint of the certificate
//     that signed, as the person checking names it; no chain is followed and
//     no key usage is read, because the format says so.
//   - [NewRequest] builds the "TimeStampReq" the format asks a service for:
//     SHA-256 over the fingerprint, a fresh nonce, the certificate asked for.
//     [ReadResponse] reads the service's "TimeStampResp" strictly and hands
//     back the token once its status, nonce and imprint match the request.
//   - [Client] asks one service over HTTP with a time limit, and, beyond
//     the format's check, may hold the signing certificate to the chain a
//     service was configured with (RFC 3161 key usage, roots the caller
//     trusts): a writer refuses a stamp it cannot stand behind.
//
// Every refusal is a problem code of the format: "stamp-bad-data" (not laid
// out as the standards say), "stamp-wrong-data" (made for something else),
// "stamp-invalid" (does not check).
package stamp
