import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { parseClassProfile, speedupDips } from '../../core/profile.ts';
import { classView } from '../../service/class-in-use.ts';
import { checkClassFits } from '../../service/class-operations.ts';
import { ServiceError } from '../../service/errors.ts';
import { requireOperator } from '../auth.ts';
import type { ApiEnv } from '../env.ts';
import { ClassDeletedView, ClassListView, ClassSavedView, ClassValidView } from '../responses.ts';
import {
  bodyErrors,
  ClassBody,
  ClassNameParam,
  ErrorSchema,
  errors,
  jsonBody,
  jsonContent,
} from '../schemas.ts';

/** The job classes: list, put, delete and validate a class profile (operator). */
export function classRoutes(app: OpenAPIHono<ApiEnv>) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/classes',
      operationId: 'listClasses',
      summary: 'Job classes with their profiles and prior arrival rates',
      responses: { 200: jsonContent(ClassListView, 'classes'), ...errors },
    }),
    (c) => {
      requireOperator(c);
      const service = c.var.service;
      const classes = [...service.state.classes.values()].map((s) => classView(service, s));
      return c.json({ classes }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v1/classes/{name}',
      operationId: 'putClass',
      summary: 'Create or replace a job class profile (validated; speedup dips are accepted and listed)',
      request: { params: ClassNameParam, ...jsonBody(ClassBody) },
      responses: {
        200: jsonContent(ClassSavedView, 'saved'),
        ...bodyErrors,
        409: jsonContent(ErrorSchema, 'an active job of the class is in an epoch the new profile lacks'),
        422: jsonContent(
          ErrorSchema,
          "profiles_too_large: the classes' speedup tables would hold more than 200,000 entries",
        ),
      },
    }),
    (c) => {
      requireOperator(c);
      const { name } = c.req.valid('param');
      const input = c.req.valid('json');
      const profile = parseClassProfile(input.profile);
      if (profile.name !== name) {
        throw new ServiceError(
          400,
          'invalid',
          `profile.name "${profile.name}" differs from the path's "${name}"`,
          'profile.name',
        );
      }
      c.var.service.putClass(profile, input.priorRatePerHour);
      return c.json({ saved: name, dips: speedupDips(profile) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/classes/{name}',
      operationId: 'deleteClass',
      summary: 'Delete a job class; refused while jobs of it are waiting or running',
      request: { params: ClassNameParam },
      responses: {
        200: jsonContent(ClassDeletedView, 'deleted'),
        ...errors,
        404: jsonContent(ErrorSchema, 'no such class'),
        409: jsonContent(ErrorSchema, 'jobs of the class are active, or it is the only class'),
      },
    }),
    (c) => {
      requireOperator(c);
      const { name } = c.req.valid('param');
      c.var.service.deleteClass(name);
      return c.json({ deleted: name }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/classes/validate',
      operationId: 'validateClass',
      summary: 'Validate a class profile without saving it',
      request: jsonBody(ClassBody),
      responses: {
        200: jsonContent(ClassValidView, 'valid'),
        ...bodyErrors,
        422: jsonContent(ErrorSchema, 'profiles_too_large: as PUT /v1/classes/{name} would be refused'),
      },
    }),
    (c) => {
      requireOperator(c);
      const profile = parseClassProfile(c.req.valid('json').profile);
      // What a put would refuse is not valid either: found only at the put, it read as valid here.
      checkClassFits(c.var.service, profile);
      return c.json(
        { valid: true, name: profile.name, epochs: profile.epochs.length, dips: speedupDips(profile) },
        200,
      );
    },
  );
}
