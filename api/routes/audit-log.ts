import { listAuditEntries } from '../../src/db/audit-log.ts';
import { AuditLogQuery, AuditLogSchema } from '../../src/schemas/audit-log.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

export const auditLogFamily: RouteFamily = {
  base: '/api/v1/rest',
  order: 185,
  tag: 'Audit log',
  description: 'Every write (POST, PUT, PATCH, DELETE) made through the REST API, MCP tools or the /inbox console: who (the API key, '
    + 'and the member of a user token), what (the operation and the resource), when, from where (the client address) and the outcome. '
    + 'Append-only; entries older than the retention setting are deleted.',
  routes: [
    route({
      method: 'GET', path: '/audit-log', operationId: 'list_audit_log', summary: 'The audit log, newest first',
      description: 'Filters combine: a time range (`from` inclusive, `to` exclusive), `operation`, `resource_id`, `api_key_id`, '
        + '`member_id`, `channel` and `outcome`. A refused write (403, 400, 404, 409) is recorded too, with its `error_code`.',
      permissions: ['org.read'], query: AuditLogQuery,
      responses: { 200: { description: 'A page of entries', schema: AuditLogSchema } },
      async handler({ query, principal, deps }) {
        return pageReply(await listAuditEntries(deps.sql, principal.orgId, query), query);
      },
    }),
  ],
};
