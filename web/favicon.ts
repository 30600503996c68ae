/**
 * The service's icon: a white "C" on the accent blue, as a small SVG. Pages carry it inline in their heads
 * (`<link rel="icon" href={FAVICON_HREF}>`), so the browser never asks the origin for /favicon.ico and no route or
 * file is needed; every page's Content-Security-Policy allows `img-src data:` (web/pay/page.ts, web/pos/index.tsx,
 * web/dashboard/index.tsx).
 */
export const FAVICON_SVG =
  "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'>" +
  "<rect width='32' height='32' rx='7' fill='#2456d6'/>" +
  "<path d='M21.6 11.2a7.6 7.6 0 1 0 0 9.6' fill='none' stroke='#fff' stroke-width='3.6' stroke-linecap='round'/>" +
  "</svg>";

/** The icon as a `data:` URL for `<link rel="icon">`. */
export const FAVICON_HREF = `data:image/svg+xml,${encodeURIComponent(FAVICON_SVG)}`;
