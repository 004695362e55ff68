// Package slip reads, checks and writes the passkey-signed kinds of the
// Provared format: the slip (the permission a person signs, format
// description section 4), the approval (the person's yes to one action,
// section 17) and the cancellation (section 22). It validates their content
// member by member with the reference's codes, puts back covered fields
// (section 24), checks the passkey signature against the slip's issuer, and
// gives the book and the executor a parsed Slip.
package slip
