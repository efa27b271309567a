import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Sql } from './db/index.ts';

/**
 * What a family's use cases are handed (issue 41, item 6): declared once here, so a family adds
 * only what is its own (`FamilyDeps & { secrets: SecretBox }`). The handlers' `AppDeps` satisfies it.
 */
export interface FamilyDeps { sql: Sql; temporal: Client; config: Config; log: Logger }
