# boa's service image. Built by `npx cdk deploy` (the CDK app only hashes this directory at synth).
# Two stages: the first compiles the TypeScript to JavaScript (npm run build -> dist/) and keeps only
# production dependencies; the second runs that JavaScript on Node 22 LTS as the non-root `node` user.

FROM node:22-bookworm AS build
WORKDIR /app
# Dependencies first, so a code change reuses this layer (the image has the compilers better-sqlite3
# needs when no prebuilt binary matches).
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs scripts/build.mjs
COPY src src
COPY data/profiles.json data/profiles.json
RUN node scripts/build.mjs dist \
    && npm prune --omit=dev --no-audit --no-fund \
    && npm cache clean --force

FROM node:22-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./

# SQLite lives on the persistent volume mounted here (the Deployment sets fsGroup 1000 so `node` can write).
RUN mkdir -p /var/lib/boa && chown node:node /var/lib/boa
ENV BOA_CLOUD=aws \
    BOA_HOST=0.0.0.0 \
    BOA_PORT=8080 \
    BOA_DATA_DIR=/var/lib/boa

USER node
EXPOSE 8080
CMD ["node", "src/service/main.js"]
