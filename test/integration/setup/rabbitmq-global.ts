/**
 * One RabbitMQ node shared by the whole integration run (starting one takes 6-13 s here), started
 * before the first integration file and stopped after the last. Tests read its URL with
 * `inject('rabbitUrl')`. RabbitMQ must be installed (.ci/run installs it): if it is not, the run
 * fails loudly instead of skipping the interop tests.
 */
import type { TestProject } from 'vitest/node';
import { type RabbitCluster, startRabbit } from '../../support/rabbitmq.js';

declare module 'vitest' {
  export interface ProvidedContext {
    rabbitUrl: string;
  }
}

let rabbit: RabbitCluster | undefined;

export async function setup(project: TestProject): Promise<void> {
  rabbit = await startRabbit(1);
  project.provide('rabbitUrl', rabbit.urls[0]);
}

export async function teardown(): Promise<void> {
  await rabbit?.stop();
}
