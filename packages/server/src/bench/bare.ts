/**
 * The baseline of the benchmark: a bare Fastify server with the same body schema as
 * POST /payments/credentials and no work behind it, so the figures can be read as a ratio.
 */
import { type Static, Type } from '@sinclair/typebox';
import Fastify from 'fastify';

const Body = Type.Object({
  paymentId: Type.String({ minLength: 1, maxLength: 64 }),
  sessionId: Type.String({ minLength: 1, maxLength: 64 }),
  amount: Type.Integer({ minimum: 1, maximum: 99_999_999 }),
  merchantReference: Type.String({ minLength: 1, maxLength: 128 }),
  currency: Type.String({ maxLength: 16 }),
});

const app = Fastify();
app.post<{ Body: Static<typeof Body> }>('/payments/credentials', { schema: { body: Body } }, async () => ({
  code: 200,
  message: 'OK',
}));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.stdout.write('ready\n');
