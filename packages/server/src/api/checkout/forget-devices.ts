/**
 * The page the e-mail about a remembered device links to: "Forget every device". The link only shows
 * the question (or that the link does not work), so that a mail scanner following it changes nothing;
 * the button posts the form back.
 */
import { createHash } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { FORGET_DEVICES_PATH, type ShopperAuth } from '../../shopper-auth/index.js';
import { escapeHtml } from './page.js';

/** A link token as the e-mail writes it: the shopper id, the time, the signature. */
const Token = Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_.-]+$' });

/** The pages' one style sheet, inline and allowed by its hash: nothing else may style or script them. */
const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;color:#111827;max-width:34rem;margin:3rem auto;padding:0 1rem}' +
  'h1{font-size:1.4rem}button{font:inherit;font-weight:600;padding:.7rem 1.2rem;border:0;border-radius:.5rem;' +
  'background:#1d4ed8;color:#fff;cursor:pointer}button:focus-visible{outline:3px solid #93c5fd;outline-offset:2px}';
const CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; form-action 'self'; frame-ancestors 'none'`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body>
</html>
`;
}

/** An HTML answer, kept out of frames (and, as every answer is, out of caches). */
function html(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply
    .status(status)
    .header('referrer-policy', 'no-referrer')
    .header('content-security-policy', CSP)
    .type('text/html; charset=utf-8')
    .send(body);
}

const INVALID = page(
  'This link does not work',
  '<p>It is not one we sent, or it is older than any device it could be about. Devices stop remembering you on their own when their time is up; to stop one now, choose "Not you? Sign out" in the checkout on it.</p>',
);

export const forgetDevicesRoutes =
  (deps: { shopperAuth: ShopperAuth }): FastifyPluginAsyncTypebox =>
  async (app) => {
    // The form's own body: only these routes take it, so the API keeps answering it with 415.
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_request, text, done) => done(null, Object.fromEntries(new URLSearchParams(text as string))),
    );
    app.get(
      FORGET_DEVICES_PATH,
      { schema: { hide: true, querystring: Type.Object({ token: Token }) }, attachValidation: true },
      async (request, reply) => {
        if (request.validationError || !deps.shopperAuth.forgetLinkShopper(request.query.token)) {
          return html(reply, 400, INVALID);
        }
        return html(
          reply,
          200,
          page(
            'Forget every device that remembers you',
            `<p>Every browser that opens your wallet without a one-time code will ask for one again, and the checkouts those browsers opened without a code end. Nothing else changes: your cards and addresses stay.</p>
<form method="post" action="${FORGET_DEVICES_PATH}"><input type="hidden" name="token" value="${escapeHtml(request.query.token)}"><button type="submit">Forget every device</button></form>`,
          ),
        );
      },
    );

    app.post(
      FORGET_DEVICES_PATH,
      { schema: { hide: true, body: Type.Object({ token: Token }) }, attachValidation: true },
      async (request, reply) => {
        if (request.validationError) return html(reply, 400, INVALID);
        const result = await deps.shopperAuth.forgetDevicesByLink(request.body.token);
        if (!result) return html(reply, 400, INVALID);
        const said =
          result.forgotten === 0
            ? 'No device remembered you any more: there was nothing to forget.'
            : `${result.forgotten === 1 ? 'One device' : `${result.forgotten} devices`} forgot you. The next checkout on any of them asks for a one-time code.`;
        return html(reply, 200, page('Done: no device remembers you', `<p>${said}</p>`));
      },
    );
  };
