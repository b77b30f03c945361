// node oidc-provider's peer of crmd's token endpoint, for bench/compare.sh only.
//
//   node oidc-server.mjs <port> <client_secret>
//
// Listens on 127.0.0.1:<port> and prints one JSON line {"token_endpoint": "..."} once it
// listens. One confidential client, `bench` (client_secret_basic, client_credentials only).
// With resource indicators a client_credentials grant for the resource <issuer>/mcp issues
// an ES256-signed JWT access token (the same kind crmd issues), keys generated at start.
// oidc-provider's default in-memory adapter; its own defaults otherwise.
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

const port = Number(process.argv[2]);
const secret = process.argv[3];
const issuer = `http://127.0.0.1:${port}`;
const resource = `${issuer}/mcp`;
const scope = 'contacts:read contacts:write';

async function privateJwk(alg, kid, options) {
  const { privateKey } = await generateKeyPair(alg, { extractable: true, ...options });
  return { ...(await exportJWK(privateKey)), alg, use: 'sig', kid };
}

const provider = new Provider(issuer, {
  clients: [{
    client_id: 'bench',
    client_secret: secret,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  // ES256 signs the access tokens; RS256 is only there because ID tokens default to it.
  jwks: { keys: [await privateJwk('ES256', 'es'), await privateJwk('RS256', 'rs', { modulusLength: 2048 })] },
  scopes: scope.split(' '),
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (indicator !== resource) throw new Provider.errors.InvalidTarget();
        return { scope, audience: resource, accessTokenTTL: 3600, accessTokenFormat: 'jwt',
                 jwt: { sign: { alg: 'ES256' } } };
      },
    },
  },
});
provider.listen(port, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ token_endpoint: `${issuer}/token` }) + '\n');
});
