export { RenderError } from './errors.ts';
export type { RenderedPage, RenderRequest, WaitStrategy } from './page-render.ts';
export { Renderer, type RendererOptions } from './renderer.ts';
export type { SessionPage } from './session-page.ts';
