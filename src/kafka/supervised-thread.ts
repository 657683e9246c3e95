// Supervision of the Kafka threads (thread.ts): a thread that dies is started again, a bounded
// number of times, and /readyz reports each thread's state.
import type { Worker } from 'node:worker_threads';
import { log } from '../log';
import { startKafkaThread, type KafkaThreadSettings } from './thread';
import { wallNowMs } from '../clock';

export interface ThreadHealth { ok: boolean; restarts: number; error?: string }

export interface SupervisorOptions {
  /** Restarts allowed within `windowMs` before the process gives up and exits. */
  restartsMax?: number;
  windowMs?: number;
  /** What happens when the restarts are spent; the default exits so a supervisor restarts the process. */
  onExhausted?: (role: string) => void;
}

/** Every supervised thread of this process, for /readyz. */
export interface WatchedThread { readonly role: string; health(): ThreadHealth; crash(): Promise<void> }
const supervised = new Set<WatchedThread>();

export function supervisedThreads(): WatchedThread[] {
  return [...supervised];
}

/**
 * A Kafka thread that is started again when it dies (an uncaught error, an exit), at most
 * `restartsMax` times within `windowMs`, with a growing pause; past that the process exits, as
 * a process with a dead thread would only answer 202s and lose logs. The owner re-posts what the
 * dead thread had not acknowledged from its `onRestarted` callback.
 */
export class SupervisedThread<M extends { kind: string } = { kind: string }> {
  private worker: Worker | null = null;
  private closing = false;
  private restartTimes: number[] = [];
  private lastError: string | undefined;
  private readonly listeners: Array<(message: unknown) => void> = [];
  private readonly restartedListeners: Array<() => void> = [];

  private constructor(private readonly file: string, readonly role: string, private readonly settings: KafkaThreadSettings, private readonly options: Required<SupervisorOptions>) {}

  static async start<T extends { kind: string }>(file: string, role: string, settings: KafkaThreadSettings, options: SupervisorOptions = {}): Promise<SupervisedThread<T>> {
    const thread = new SupervisedThread<T>(file, role, settings, {
      restartsMax: options.restartsMax ?? 5,
      windowMs: options.windowMs ?? 60_000,
      onExhausted: options.onExhausted ?? ((name) => {
        log.fatal({ role: name }, 'a Kafka thread kept dying: stopping the process');
        process.exit(70);
      }),
    });
    await thread.spawn();
    supervised.add(thread);
    return thread;
  }

  onMessage(listener: (message: unknown) => void): void {
    this.listeners.push(listener);
  }

  /** Called after each restart: post again what the dead thread had not acknowledged. */
  onRestarted(listener: () => void): void {
    this.restartedListeners.push(listener);
  }

  get alive(): boolean {
    return this.worker !== null;
  }

  health(): ThreadHealth {
    return { ok: this.alive, restarts: this.restartTimes.length, ...(this.alive || !this.lastError ? {} : { error: this.lastError }) };
  }

  /** Posts to the thread; dropped while it is down (the owner re-posts after the restart). */
  post(message: M): void {
    this.worker?.postMessage(message);
  }

  /** Ends the thread as a crash would: the supervision test and the chaos suite use it. */
  async crash(): Promise<void> {
    await this.worker?.terminate();
  }

  /** Asks the thread to finish what was posted and end; it is not restarted. */
  async close(): Promise<void> {
    this.closing = true;
    supervised.delete(this);
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ kind: 'close' });
    await exited;
  }

  private async spawn(): Promise<void> {
    const worker = await startKafkaThread(this.file, this.role, this.settings);
    worker.unref(); // the process ends when its roles have stopped, not when a thread does
    worker.on('message', (message) => { for (const listener of this.listeners) listener(message); });
    worker.on('error', (error) => {
      this.lastError = error.message;
      log.error({ err: error, role: this.role }, 'a Kafka thread failed');
    });
    worker.on('exit', (code) => {
      this.worker = null;
      if (this.closing) return;
      this.lastError ??= `exited with code ${code}`;
      void this.restart();
    });
    this.worker = worker;
  }

  private async restart(): Promise<void> {
    const now = wallNowMs();
    this.restartTimes = [...this.restartTimes.filter((at) => now - at < this.options.windowMs), now];
    if (this.restartTimes.length > this.options.restartsMax) {
      this.options.onExhausted(this.role);
      return;
    }
    for (let attempt = 1; !this.closing; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 100 * 2 ** (this.restartTimes.length + attempt - 2))));
      try {
        await this.spawn();
        this.lastError = undefined;
        log.warn({ role: this.role, restarts: this.restartTimes.length }, 'a Kafka thread died and was restarted');
        for (const listener of this.restartedListeners) listener();
        return;
      } catch (error) {
        this.lastError = (error as Error).message;
        if (attempt >= this.options.restartsMax) {
          this.options.onExhausted(this.role);
          return;
        }
      }
    }
  }
}
