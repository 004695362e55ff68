// Package page is the person's own page (issue 14): a small web page,
// served by `mcp-executor page` from files embedded in the binary, where
// the person with a passkey registers it, signs a slip, approves or
// declines each call held for a passkey approval, and cancels a slip.
//
// The passkey signature is the only authority. The page's server holds no
// secret: it prepares what the passkey must sign, checks what comes back
// against the slip's issuer, and writes files the executor reads:
//
//   - <queue>/<id>.prepared: written by the executor ([Channel]) beside the
//     queue's request file <id>.json for a call whose slip asks for the
//     person's approval: the Provared approval prepared for the call's
//     stub ([Prepared]).
//   - <queue>/<id>.signed: written by the page, or by any Provared signer:
//     the assembled approval, or a passkey-signed decline ([Signed]). The
//     executor's [Channel] checks it and answers the held call.
//   - <slip>.cancellation.json: a passkey-signed cancellation, honoured by
//     the executor at once ([WatchCancellations]). The page writes it
//     beside the executor's copy ([StateCancellationPath]: the executor's
//     own writable state, where the slip's folder may be read-only); the
//     executor also takes one that another Provared signer dropped beside
//     the slip file ([CancellationPath]).
package page
