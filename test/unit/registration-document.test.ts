import assert from 'node:assert/strict';
import { registrationDocumentProblem } from '../../src/auth/oauth/registration-guard.js';

describe('registration documents: public clients only', function () {
  const doc = { client_name: 'Agent host', redirect_uris: ['http://127.0.0.1:1/cb'] };

  it('takes "none" or no method at all', function () {
    assert.equal(registrationDocumentProblem({ ...doc, token_endpoint_auth_method: 'none' }), null);
    assert.equal(registrationDocumentProblem(doc), null);
  });

  it('refuses every other client authentication method, naming it', function () {
    for (const method of ['client_secret_basic', 'client_secret_post', 'client_secret_jwt', 'private_key_jwt', 'tls_client_auth', 'self_signed_tls_client_auth', 'NONE', '', 'x'.repeat(500)]) {
      const problem = registrationDocumentProblem({ ...doc, token_endpoint_auth_method: method });
      assert.match(problem ?? '', /only public clients/, method);
      assert.ok((problem ?? '').length < 200, 'the method is quoted shortened');
    }
  });
});
