let refused = [];

export function initialize(names) {
  refused = names;
}

export async function resolve(specifier, context, next) {
  const hit = refused.some(
    (name) => specifier.startsWith(name) && (name.endsWith('/') || /^(\/|$)/.test(specifier.slice(name.length))),
  );
  if (hit) throw new Error(`refused ${specifier}`);
  return next(specifier, context);
}
