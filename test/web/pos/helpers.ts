// Shared setup of the POS tests: a merchant signed in on the dashboard, the service chain's USDT as a terminal token.
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { signedIn, unescapeHtml as unescape } from "../dashboard/forms.js";
import type { TestService } from "../../helpers/service.js";

export const payout = () => privateKeyToAccount(generatePrivateKey()).address;

/** A new merchant (with an API key) and a browser signed in to its dashboard. */
export const signedInMerchant = (svc: TestService) => signedIn(svc, "Corner Shop");

/** `chainId:address` of a token of the test stack (lowercase, as terminals store it). */
export function tokenKeyOf(svc: TestService, chainId: number, symbol: string) {
  const t = svc.deps.chains.find((c) => c.chainId === chainId)!.tokens.find((x) => x.symbol === symbol)!;
  return `${chainId}:${t.address.toLowerCase()}`;
}

/** The value of the `data-testid` input or the text of the element, from server-rendered HTML. */
export function testIdValue(html: string, testId: string): string | undefined {
  const input = new RegExp(`<input[^>]*data-testid="${testId}"[^>]*>`).exec(html)?.[0];
  if (input) return /value="([^"]*)"/.exec(input)?.[1];
  return new RegExp(`data-testid="${testId}"[^>]*>([^<]*)<`).exec(html)?.[1];
}

/**
 * What a browser would post for the form `data-testid=testId` of server-rendered HTML, untouched: every named input
 * (checkboxes and radios only when checked) and each select's selected option.
 */
export function formFields(html: string, testId: string): Record<string, string[]> {
  const form = new RegExp(`<form[^>]*data-testid="${testId}"[^>]*>([\\s\\S]*?)</form>`).exec(html)?.[1];
  if (form === undefined) throw new Error(`no form ${testId} on the page`);
  const out: Record<string, string[]> = {};
  const add = (name: string, value: string) => (out[name] ??= []).push(unescape(value));
  for (const [tag] of form.matchAll(/<input[^>]*>/g)) {
    const attr = (n: string) => new RegExp(`\\s${n}="([^"]*)"`).exec(tag)?.[1];
    const name = attr("name");
    const type = attr("type") ?? "text";
    if (!name || ((type === "checkbox" || type === "radio") && !/\schecked[=\s/>]/.test(tag))) continue;
    add(name, attr("value") ?? (type === "checkbox" || type === "radio" ? "on" : ""));
  }
  for (const [, name, options] of form.matchAll(/<select[^>]*\sname="([^"]*)"[^>]*>([\s\S]*?)<\/select>/g)) {
    const chosen = /<option[^>]*value="([^"]*)"[^>]*\sselected[=\s>]/.exec(options!) ?? /<option[^>]*value="([^"]*)"/.exec(options!);
    if (chosen) add(name!, chosen[1]!);
  }
  return out;
}
