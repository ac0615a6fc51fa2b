/**
 * The few globals pure engine code uses that every runtime it runs in provides (Node, browsers, web
 * workers), declared here because tsconfig.engine.json gives it neither DOM nor Node types.
 * Only tsconfig.engine.json includes this file; the other layers get these from their own libs.
 */
declare function structuredClone<T>(value: T): T;
declare const performance: { now(): number };
