// Package contentrules reads the executor's rules on the content of a
// change (the file named by contentRules in the settings) and tests a tool
// call's arguments against them before the call is let through.
//
// A rule names one or more tools, may narrow itself to calls whose
// arguments meet its "when" conditions, says where the proposed content is
// ("content": a JSON Pointer and "as": "json" or "value"), and lists the
// "test" conditions the content must meet; a rule with no test refuses
// every call it applies to. Content that cannot be read exactly (not JSON,
// a member named twice or twice once capitals are set aside, a whole
// number beyond 2^53−1, nothing at the content pointer, a text over 4,096
// characters where a pattern would test it) refuses the call too.
//
// The rules file is read strictly and every fault names its place
// ("rules[3].test[1].oneOf: ..."). A refusal never holds a value from the
// arguments: only the rule's name and pointers and values from the rules
// file.
//
// What the rules can never promise (another tool, another path spelling,
// a server that reads content more loosely) is set out in the executor's
// documentation; this package tests only what a call carries.
package contentrules
