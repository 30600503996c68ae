import { Hono } from "hono";
import type { AppEnv } from "../context.js";

/** The merchant GraphQL API at /api/graphql (the same operations as the REST routes). */
export const graphqlRoute = new Hono<AppEnv>();
