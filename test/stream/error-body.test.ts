// Error bodies as servers write them: SGLang's flat error, OpenAI's nested one, FastAPI's detail, and what
// is none of these (an HTML page, plain text).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseErrorBody } from '../../src/stream/index.js';

test("SGLang's flat error body gives its message, type and code", () => {
  assert.deepEqual(parseErrorBody('{"object":"error","message":"The model `gpt-4` does not exist.","type":"NotFoundError","param":null,"code":404}'), {
    message: 'The model `gpt-4` does not exist.',
    type: 'NotFoundError',
    code: 404,
  });
});

test("OpenAI's nested error body gives its message, type and code, and a string error is the message", () => {
  assert.deepEqual(parseErrorBody('{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}'), {
    message: 'Incorrect API key provided',
    type: 'invalid_request_error',
    code: 'invalid_api_key',
  });
  assert.deepEqual(parseErrorBody('{"error":"unauthorized"}'), { message: 'unauthorized', type: null, code: null });
});

test("FastAPI's detail (SGLang on an unknown route) is the message", () => {
  assert.deepEqual(parseErrorBody('{"detail":"Not Found"}'), { message: 'Not Found', type: null, code: null });
});

test('an HTML page, plain text, an empty body and unrelated JSON are not error bodies', () => {
  for (const body of ['<html><body>502 Bad Gateway</body></html>', 'upstream connect error', '', '{"choices":[]}', '[1]']) assert.equal(parseErrorBody(body), null, body);
});
