// The worker's workflowsPath: every workflow the service runs, and nothing with I/O.
export { purgeAgent } from './purge-agent.ts';
export { deliverWebhook } from './deliver-webhook.ts';
export { sweepWebhookEvents } from './sweep-webhook-events.ts';
export { crawlSite } from './crawl-site.ts';
export { scheduledCrawl } from './scheduled-crawl.ts';
export { conversationLifecycle } from './conversation.ts';
export { evaluateConversationWorkflow } from './evaluate-conversation.ts';
export { billPhoneNumber } from './number-billing.ts';
export { sendEmailReply } from './send-email-reply.ts';
export { generateReport, scheduledReportRun } from './report-run.ts';
