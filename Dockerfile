# Agent Management Service: one image for both roles.
#   API:    node --import tsx src/main.ts api      (the default command)
#   worker: node --import tsx src/main.ts worker
# Both need DATABASE_URL and TEMPORAL_ADDRESS; see docker-compose.yml.
#
# The TypeScript sources run as they are through tsx (a runtime dependency), so there is no build
# stage: installing the production dependencies is the whole build.
FROM node:20-bookworm-slim

# SCARF_ANALYTICS=false: never phone home from an install script (swagger-ui-dist pulls in
# @scarf/scarf; package.json's allowScripts refuses it, but this image's npm 10 ignores that field).
ENV NODE_ENV=production SCARF_ANALYTICS=false NPM_CONFIG_UPDATE_NOTIFIER=false

WORKDIR /app

# Dependencies first, so a change in the sources reuses this layer. The glob makes .npmrc optional.
# `npm install`, not `npm ci`: the lock lacks other platforms' optional packages (the registry
# reachable where it is written does not serve them), so `npm ci` refuses it as "out of sync";
# `npm install` installs the locked versions for this platform (see scripts/run.mjs). Switch to
# `npm ci --omit=dev` once the lock is complete. --loglevel: the project .npmrc may say silent.
COPY package.json package-lock.json .npmrc* ./
RUN npm install --omit=dev --no-audit --no-fund --loglevel=warn && npm cache clean --force

COPY tsconfig.json ./
COPY src ./src
COPY api ./api
COPY workflows ./workflows
COPY activities ./activities
COPY web ./web

# The code stays owned by root (read-only for the service); only DATA_DIR is writable.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node

EXPOSE 8080
CMD ["node", "--import", "tsx", "src/main.ts", "api"]
