// Waits for a request's log to be readable: the pipeline writes it through Kafka within about a second.
import { testService } from '../hooks';
import { call, eventually } from './http';

const LOG_WAIT_MS = 15_000;

/** The log of `requestId`, read with the master key (whose reads log no account). */
export async function loggedRequest(requestId: string): Promise<any> {
  const { baseUrl, runtime } = testService();
  return eventually(async () => {
    const response = await call(baseUrl, 'GET', `/v1/request-logs/${requestId}`, undefined, { token: runtime.config.masterKey });
    return response.status === 200 ? response.body : undefined;
  }, LOG_WAIT_MS, `the log of request ${requestId}`);
}
