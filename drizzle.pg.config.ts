// drizzle-kit for the PostgreSQL engine: `npm run db:generate:pg` writes drizzle/pg/ from src/store/pg/schema.ts
// (built from src/store/tables.ts)
// (drizzle.config.ts does the same for SQLite into drizzle/).
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./src/store/pg/schema.ts",
  out: "./drizzle/pg",
});
