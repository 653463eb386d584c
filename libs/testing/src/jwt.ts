import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';

/** A signing key and its JWKS, to configure Hangar:Api:Jwt and mint tokens with chosen roles. */
export async function createJwtIssuer(options: { issuer?: string; audience?: string } = {}) {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test-key', alg: 'ES256', use: 'sig' };
  return {
    jwks: JSON.stringify({ keys: [jwk] }),
    sign: (claims: JWTPayload, expiresIn = '5m') => {
      let jwt = new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'test-key' }).setIssuedAt().setExpirationTime(expiresIn);
      if (options.issuer) jwt = jwt.setIssuer(options.issuer);
      if (options.audience) jwt = jwt.setAudience(options.audience);
      return jwt.sign(privateKey);
    },
  };
}
