# msgflow's one image: every process is a `msgflow` subcommand (worker, ingress, codec serve, sandbox,
# temporal setup), configured by the same environment variables as local runs (src/config.ts).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
# The package's bin: without src/ beside it (the image has only dist/), it runs dist/.
COPY bin/msgflow.js ./bin/msgflow.js
# The image runs the worker and the sandbox, so msgflow's optional peers (dev dependencies of the checkout)
# become plain dependencies before the dev ones are pruned.
RUN npm run build \
  && node -e "const fs = require('fs'); const p = require('./package.json'); \
     for (const n of Object.keys(p.peerDependencies)) if (p.devDependencies[n]) { \
       p.dependencies[n] = p.devDependencies[n]; delete p.devDependencies[n]; } \
     fs.writeFileSync('package.json', JSON.stringify(p, null, 2));" \
  && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
# The worker bundles its workflows at start from dist/workflows (compiled), like `msgflow worker` locally; its
# build id in the worker deployment is a hash of that code, the same for every container of this image
# (`docker run --rm msgflow:local --version` prints it; MSGFLOW_BUILD_ID sets another).
COPY --from=build --chown=node:node /app/dist ./dist
COPY --from=build --chown=node:node /app/bin ./bin
RUN mkdir -p /data && chown node:node /data
USER node
ENTRYPOINT ["node", "bin/msgflow.js"]
CMD ["--help"]
