export const frontmatter = { name: 'noop', description: 'Does nothing; the benchmark measures the pipeline around it.' };
export default async function noop() {
  return null;
}
