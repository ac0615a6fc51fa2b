import { createContext } from 'react';

/**
 * Below this zoom a layer's text is too small to read, and a 1,000-layer graph puts hundreds of nodes
 * on screen: layer and block nodes draw only their coloured box (selection and search matches still
 * coloured, every mouse action still works). Without their text they cost a fraction to mount, lay
 * out, measure and hit-test, which is what keeps zooming out and panning a big graph smooth.
 */
export const FAR_ZOOM = 0.4;

/** Whether the canvas is zoomed out past FAR_ZOOM: one store subscription in the canvas, not one per node. */
export const FarZoom = createContext(false);
