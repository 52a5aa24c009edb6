export async function resolve(specifier, context, next) {
  if (specifier.startsWith('@temporalio/')) throw new Error(`refused ${specifier}`);
  return next(specifier, context);
}
