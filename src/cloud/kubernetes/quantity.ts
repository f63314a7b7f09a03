const QUANTITY = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m)?$/;

/**
 * A Kubernetes quantity times a whole factor, in the same unit: "16Gi" x 3 = "48Gi", "1.5Gi" x 3 =
 * "4.5Gi". Throws naming the quantity and the allowed form when it is not one.
 */
export function scaleQuantity(quantity: string, factor: number): string {
  const match = QUANTITY.exec(quantity.trim());
  if (!match) {
    throw new Error(
      `"${quantity}" is not a Kubernetes quantity: a number with an optional unit (Ki, Mi, Gi, Ti, k, M, G, T), e.g. "16Gi"`,
    );
  }
  const value = Number(match[1]) * factor;
  // Rounded to avoid binary float noise ("4.499999Gi"); quantities allow at most 3 decimals anyway.
  return `${Math.round(value * 1000) / 1000}${match[2] ?? ''}`;
}
