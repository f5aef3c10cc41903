FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
# The workspaces' manifests must be there for npm to link them; their sources come with the rest.
COPY packages/wire/package.json packages/wire/
COPY packages/agent-client/package.json packages/agent-client/
COPY packages/x402-credit/package.json packages/x402-credit/
RUN npm install --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev
USER node
