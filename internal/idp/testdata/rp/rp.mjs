// Runs Kadens' subscriber login as a relying party would, with the
// certified openid-client library: discovery, authorize (PKCE S256, nonce,
// state), the login form, the code exchange, userinfo, a refresh (and the
// old refresh token refused), logout. jose verifies both tokens against the
// JWKS. Input: one JSON object on argv[2]; output: one JSON object.
import * as client from 'openid-client';
import * as jose from 'jose';

const p = JSON.parse(process.argv[2]);
const out = {};

const config = await client.discovery(new URL(p.issuer), p.clientId, p.clientSecret, undefined,
  { execute: [client.allowInsecureRequests] });
out.issuer = config.serverMetadata().issuer;

const verifier = client.randomPKCECodeVerifier();
const challenge = await client.calculatePKCECodeChallenge(verifier);
const state = client.randomState();
const nonce = client.randomNonce();
const authorize = client.buildAuthorizationUrl(config, {
  redirect_uri: p.redirectUri, scope: 'openid offline_access', code_challenge: challenge,
  code_challenge_method: 'S256', state, nonce, connection: p.connection, orgname: 'Avisa', language: 'nb',
});

// The browser part: follow the IdP's redirects by hand, keep its cookie,
// fill in the form.
let res = await fetch(authorize, { redirect: 'manual' });
if (res.status !== 302) throw new Error(`authorize: ${res.status} ${await res.text()}`);
const loginURL = new URL(res.headers.get('location'), authorize);
res = await fetch(loginURL, { redirect: 'manual' });
const page = await res.text();
const cookie = res.headers.get('set-cookie').split(';')[0];
const field = (name) => page.match(new RegExp(`name="${name}" value="([^"]+)"`))[1].replaceAll('&#43;', '+');
res = await fetch(new URL('login', loginURL), {
  method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
  body: new URLSearchParams({ id: field('id'), csrf: field('csrf'), email: p.email, password: p.password }),
});
if (res.status !== 303) throw new Error(`login: ${res.status} ${await res.text()}`);
res = await fetch(new URL(res.headers.get('location'), loginURL), { redirect: 'manual' });
if (res.status !== 302) throw new Error(`callback: ${res.status} ${await res.text()}`);
const callback = new URL(res.headers.get('location'));

const tokens = await client.authorizationCodeGrant(config, callback, {
  pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce,
});
out.tokenType = tokens.token_type;
out.expiresIn = tokens.expires_in;
out.idClaims = tokens.claims();

const jwks = jose.createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri));
const id = await jose.jwtVerify(tokens.id_token, jwks, { issuer: p.issuer, audience: p.clientId, algorithms: ['ES256'] });
const access = await jose.jwtVerify(tokens.access_token, jwks, { issuer: p.issuer, audience: p.audience, algorithms: ['ES256'] });
out.idVerified = id.payload.sub;
out.accessClaims = access.payload;

out.userinfo = await client.fetchUserInfo(config, tokens.access_token, out.idClaims.sub);

const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token);
await jose.jwtVerify(refreshed.access_token, jwks, { issuer: p.issuer, audience: p.audience });
out.refreshed = refreshed.refresh_token !== tokens.refresh_token && !!refreshed.access_token;
try {
  await client.refreshTokenGrant(config, tokens.refresh_token);
  out.oldRefresh = 'accepted';
} catch (e) {
  out.oldRefresh = e.error ?? e.code ?? String(e);
}

const logout = client.buildEndSessionUrl(config, {
  id_token_hint: refreshed.id_token ?? tokens.id_token, post_logout_redirect_uri: p.logoutUri, state: 'bye',
});
res = await fetch(logout, { redirect: 'manual' });
out.logout = { status: res.status, location: res.headers.get('location') };

console.log(JSON.stringify(out));
