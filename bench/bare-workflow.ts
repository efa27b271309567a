/** The bare workflow of `npm run bench:campaigns`: started and completed, nothing else (bundled on its own). */
export async function bareWorkflow(): Promise<void> {}
