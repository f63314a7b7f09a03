import { defineConfig } from 'drizzle-kit';

// `npx drizzle-kit generate` writes the committed SQL migrations the service applies at start.
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/store/schema.ts',
  out: './src/store/migrations',
});
