/**
 * The route table answered in process (`ApiServer.dispatch`, what main's IPC handler
 * uses): no socket and no listening server, the same routes and the same error shape
 * as over HTTP; main has checked the sender, so no token, Host or Origin applies;
 * refused input is counted on the `ipc` boundary, not the HTTP one.
 */
import { describe, expect, it } from 'vitest';
import { ApiErrorBodySchema } from '../../../shared/api';
import { FakeNode } from '../../../test/support/fake-node';
import { createApiServer } from './api-server';

function server(node = new FakeNode()) {
  return { node, api: createApiServer({ node, token: 'secret', rendererDir: null }) };
}

describe('in-process dispatch', () => {
  it('answers a control route without a token and without listening', async () => {
    const { node, api } = server();
    const id = node.addReady('sim/llama-3.2-1b');
    const answer = await api.dispatch({ method: 'GET', path: '/api/state', auth: 'ipc' });
    expect(answer.status).toBe(200);
    expect((answer.body as { instances: Array<{ id: string }> }).instances.map((i) => i.id)).toEqual([id]);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
  });

  it("reads the JSON body as the route's schema does, and answers a refusal in the one error shape, counted on ipc", async () => {
    const { node, api } = server();
    const answer = await api.dispatch({ method: 'POST', path: '/api/instances', body: { model: 42 }, auth: 'ipc' });
    expect(answer.status).toBe(400);
    expect(ApiErrorBodySchema.parse(answer.body).error.code).toBe('invalid_request');
    expect(node.rejected).toEqual(['ipc']);
    expect(api.rejectedInputs()).toBe(0);
  });

  it('a stop with its confirmation in the body reaches the node', async () => {
    const { node, api } = server();
    const id = node.addReady('sim/llama-3.2-1b');
    const gone = await api.dispatch({ method: 'DELETE', path: `/api/instances/${id}`, body: { confirm: true }, auth: 'ipc' });
    expect(gone.status).toBeLessThan(300);
    expect(node.snapshot().instances).toEqual([]);
  });

  it('has no page to serve and no such path: 404 and 405 as over HTTP', async () => {
    const { api } = server();
    expect(await api.dispatch({ method: 'GET', path: '/index.html', auth: 'ipc' })).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    expect(await api.dispatch({ method: 'GET', path: '/api/nothing-here', auth: 'ipc' })).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found' } },
    });
    expect(await api.dispatch({ method: 'PUT', path: '/api/state', auth: 'ipc' })).toMatchObject({
      status: 405,
      body: { error: { code: 'method_not_allowed' } },
    });
  });
});
