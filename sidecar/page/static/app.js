// The person's page: no framework, no build step. Every value from the
// server is shown with textContent, never as HTML.
'use strict';

const csrf = document.querySelector('meta[name="csrf-token"]').content;
const $ = (id) => document.getElementById(id);
let state = null;
let slipToken = null;

function b64u(buf) {
  let s = '';
  for (const b of new Uint8Array(buf)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function unb64u(text) {
  const s = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

function say(text) { $('status').textContent = text; $('error').textContent = ''; }
function fail(err) { $('status').textContent = ''; $('error').textContent = String(err.message || err); }

async function post(path, body) {
  const r = await fetch(path, {
    method: 'POST', credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
    body: JSON.stringify(body || {}),
  });
  const out = await r.json().catch(() => ({ error: r.statusText }));
  if (!r.ok) throw new Error(out.error || r.statusText);
  return out;
}

// assert has the passkey sign one challenge the server prepared.
async function assert(ch) {
  const cred = await navigator.credentials.get({ publicKey: {
    challenge: unb64u(ch.challenge), rpId: ch.rpId, userVerification: 'required', timeout: 120000,
    allowCredentials: ch.credentialId ? [{ type: 'public-key', id: unb64u(ch.credentialId) }] : [],
  } });
  const r = cred.response;
  return post('/api/sign', { token: ch.token, assertion: {
    authenticatorData: b64u(r.authenticatorData), clientDataJSON: b64u(r.clientDataJSON), signature: b64u(r.signature),
  } });
}

// register checks the registration code, creates a passkey and sends it;
// when a passkey is registered already, that passkey then signs the new
// one's thumbprint to let it replace it.
async function register(ev) {
  ev.preventDefault();
  const b = await post('/api/register/begin', { code: $('register-code').value });
  $('register-code').value = '';
  const cred = await navigator.credentials.create({ publicKey: {
    challenge: unb64u(b.challenge),
    rp: { id: b.rpId, name: 'mcp-executor' },
    user: { id: unb64u(b.userId), name: 'slip issuer', displayName: 'The person who signs the slip' },
    pubKeyCredParams: [{ type: 'public-key', alg: -7 }, { type: 'public-key', alg: -8 }, { type: 'public-key', alg: -257 }],
    authenticatorSelection: { userVerification: 'required', residentKey: 'preferred' },
    attestation: 'none', timeout: 120000,
  } });
  const r = cred.response;
  const out = await post('/api/register/finish', { token: b.token, registration: {
    credentialId: b64u(cred.rawId), clientDataJSON: b64u(r.clientDataJSON),
    authenticatorData: b64u(r.getAuthenticatorData()), publicKey: b64u(r.getPublicKey()),
    publicKeyAlgorithm: r.getPublicKeyAlgorithm(),
  } });
  if (out.confirm) {
    say('Confirm with the passkey registered so far (' + out.replaces + ') that ' + out.thumbprint + ' replaces it.');
    const done = await assert(out);
    say('Passkey replaced. Thumbprint ' + done.thumbprint + (done.warning ? '. ' + done.warning : ''));
    return;
  }
  say('Passkey registered. Thumbprint ' + out.thumbprint);
}

const list = (text) => text.split(',').map((s) => s.trim()).filter((s) => s);

async function review(ev) {
  ev.preventDefault();
  let permission;
  try { permission = JSON.parse($('permission').value); } catch (e) { throw new Error('What keys --json printed is not JSON'); }
  const out = await post('/api/slip/prepare', {
    permission, issuerName: $('issuer-name').value, agentName: $('agent-name').value,
    actions: list($('actions').value), approval: list($('approval-actions').value),
    limits: $('limits').value.split('\n'), validFrom: $('valid-from').value.trim(),
    validUntil: $('valid-until').value.trim(), purpose: $('purpose').value,
  });
  slipToken = out;
  $('sign-slip').hidden = false;
  $('slip-review').textContent = out.content;
  $('review-fingerprint').textContent = out.fingerprint;
  $('slip-review-box').hidden = false;
  say('Read the slip below, then sign it.');
}

async function signSlip() {
  if (!slipToken) throw new Error('Review the slip first');
  const out = await assert(slipToken);
  slipToken = null;
  if (out.done === 'not-saved') {
    // The page cannot write the slip file (a read-only mount): the signed
    // slip is shown for the person to put where the executor reads it.
    $('slip-review').textContent = out.slip;
    $('sign-slip').hidden = true;
    say('Slip signed, but it could not be saved to ' + out.file + ' (' + out.reason + '). Put the text below in that file ' +
      '(in Kubernetes: the chart\'s executor.slip).' + (out.warning ? ' ' + out.warning : ''));
    return;
  }
  $('slip-review-box').hidden = true;
  say('Slip signed and saved to ' + out.file + (out.warning ? '. ' + out.warning : ''));
}

async function decide(request, decision) {
  const ch = await post('/api/approval/prepare', { request, decision });
  const out = await assert(ch);
  say('The call ' + request + ' is ' + out.done + '.');
}

async function cancelSlip() {
  const ch = await post('/api/cancel/prepare', {});
  const out = await assert(ch);
  say('The slip is cancelled; the cancellation is in ' + out.file);
}

function isoSecond(d) { return d.toISOString().replace(/\.\d{3}Z$/, 'Z'); }

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

// renderWaiting keeps the item of each call still waiting as it is (so a
// button is never swapped under the person's pointer), removes the items of
// calls no longer waiting and adds the new ones.
function renderWaiting(items) {
  const ul = $('waiting');
  const want = new Map(items.map((w) => [w.request + ' ' + JSON.stringify(w), w]));
  for (const li of Array.from(ul.children)) {
    if (!want.has(li.dataset.key)) li.remove();
    else want.delete(li.dataset.key);
  }
  $('waiting-none').hidden = items.length > 0;
  for (const [key, w] of want) {
    const li = el('li');
    li.dataset.key = key;
    li.dataset.request = w.request;
    li.append(el('p', w.sentence, 'sentence'));
    li.append(el('p', 'Tool ' + w.tool + ' · action ' + w.action + ' · amount ' + (w.amount || 'none') + ' · expires ' + w.expiresAt));
    li.append(el('pre', JSON.stringify(w.arguments, null, 2)));
    li.append(el('p', 'Arguments fingerprint ' + w.argumentsSha256 + ' · slip ' + w.slip + ' · approval ' + w.approval));
    if (w.problem) {
      // No button that would fail: say why instead.
      li.append(el('p', 'It cannot be answered here: ' + w.problem, 'warn'));
    } else {
      const yes = el('button', 'Approve with passkey', 'approve');
      const no = el('button', 'Decline with passkey', 'decline');
      yes.type = no.type = 'button';
      yes.addEventListener('click', () => decide(w.request, 'approve').then(refresh).catch(fail));
      no.addEventListener('click', () => decide(w.request, 'decline').then(refresh).catch(fail));
      li.append(yes, no);
    }
    ul.append(li);
  }
}

async function refresh() {
  const r = await fetch('/api/state', { credentials: 'same-origin' });
  state = await r.json();
  if (!r.ok) throw new Error(state.error || r.statusText);
  $('origin').textContent = state.origin;
  $('slip-path').textContent = state.slipPath;
  const pk = state.passkey;
  $('passkey-none').hidden = !!pk;
  $('passkey-info').hidden = !pk;
  $('passkey-problem').textContent = state.passkeyProblem || '';
  $('register-form').hidden = !state.codePending;
  $('register-nocode').hidden = !!pk || state.codePending;
  $('register').textContent = pk ? 'Replace the passkey' : 'Register a passkey';
  $('register-intro').textContent = pk
    ? 'A registration code is waiting (until ' + state.codeExpiresAt + '): with it, and your current passkey to confirm, a new passkey replaces the current one.'
    : 'Enter the registration code (it works once, until ' + state.codeExpiresAt + '), then register your passkey.';
  if (pk) {
    $('passkey-alg').textContent = pk.alg;
    $('thumbprint').textContent = pk.thumbprint;
    $('trust').textContent = state.trusted ? 'The settings trust it (agent.issuerKeys names it).'
      : 'The settings do not name it in agent.issuerKeys yet: add it there, or the executor trusts no slip it signs.';
  }
  const sl = state.slip;
  $('slip-info').hidden = !sl;
  $('slip-error').textContent = state.slipError || '';
  if (sl) {
    $('slip-fingerprint').textContent = sl.fingerprint;
    $('slip-purpose').textContent = sl.purpose;
    $('slip-actions').textContent = sl.actions.join(', ');
    $('slip-approval').textContent = sl.approval.length ? sl.approval.join(', ') : 'none';
    $('slip-valid').textContent = sl.validFrom + ' – ' + sl.validUntil;
    $('slip-cancelled').hidden = !state.cancelled;
    $('slip-origin').textContent = sl.origin;
    $('slip-rpid').textContent = sl.rpId;
  }
  // Why nothing can be answered here: said once, and no button offered
  // that would fail.
  $('answer-problem').textContent = sl ? (state.answerProblem || '') : '';
  $('cancel-slip').hidden = !!sl && !!state.answerProblem;
  $('cancel-slip').disabled = !sl || !pk || state.cancelled || !!state.answerProblem;
  if (!$('actions').value && state.actions.length) $('actions').value = state.actions.join(', ');
  renderWaiting(state.waiting);
  $('others').textContent = state.others ? state.others + ' other request(s) wait in the queue without a passkey (mcp-executor approve answers those).' : '';
}

function start() {
  const now = new Date();
  $('valid-from').value = isoSecond(now);
  $('valid-until').value = isoSecond(new Date(now.getTime() + 30 * 86400000));
  $('register-form').addEventListener('submit', (ev) => register(ev).then(refresh).catch(fail));
  $('slip-form').addEventListener('submit', (ev) => review(ev).catch(fail));
  $('sign-slip').addEventListener('click', () => signSlip().then(refresh).catch(fail));
  $('cancel-slip').addEventListener('click', () => cancelSlip().then(refresh).catch(fail));
  refresh().catch(fail);
  setInterval(() => refresh().catch(fail), 1000);
}

start();
