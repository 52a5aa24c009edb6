# msgflow's one image: every process is a `msgflow` subcommand (worker, ingress, codec serve, sandbox,
# temporal setup), configured by the same environment variables as local runs (src/config.ts).
FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary fits.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
# The worker bundles its workflows at start from dist/workflows (compiled), like `msgflow worker` locally.
COPY --from=build --chown=node:node /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
ENTRYPOINT ["node", "dist/src/cli/main.js"]
CMD ["--help"]
