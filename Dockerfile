# boa's service image. Built by `npx cdk deploy` (the CDK app only hashes this directory at synth).
# node:20 (Debian) has the compilers better-sqlite3 needs when no prebuilt binary matches.
FROM node:20

WORKDIR /app

# Dependencies first, so a code change reuses this layer. Not NODE_ENV=production here: `npm start` runs
# the TypeScript entry point with tsx, a dev dependency.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund && npm cache clean --force

COPY . .

# SQLite lives on the persistent volume mounted here (the Deployment sets fsGroup 1000 so `node` can write).
RUN mkdir -p /var/lib/boa && chown node:node /var/lib/boa
ENV BOA_CLOUD=aws \
    BOA_HOST=0.0.0.0 \
    BOA_PORT=8080 \
    BOA_DATA_DIR=/var/lib/boa

USER node
EXPOSE 8080
CMD ["npm", "start"]
