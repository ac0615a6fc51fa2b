import { ViewportPortal } from '@xyflow/react';
import { memo } from 'react';
import type { EdgePaths } from './toFlow';

/**
 * Every edge in one SVG inside the flow's viewport, instead of xyflow's edges. Those cost a store
 * subscription per edge and four measured handles per node, all evaluated again on every frame of a pan
 * or zoom, and a thousand SVG elements that the browser layerizes again on every frame: together they
 * stalled a 1,000-layer graph. Here a path holds many edges, and the paths come from the layout
 * (toEdges): they render again only when it changes. Edges are not interactive, so nothing is lost.
 */
export const EdgeLayer = memo(function EdgeLayer({ paths }: { paths: EdgePaths }) {
  return (
    <ViewportPortal>
      <svg className="graph__edges" aria-hidden="true">
        {paths.down.map((d, i) => (
          <path key={`down${i}`} className="graph__edge" d={d} />
        ))}
        {paths.sideways.map((d, i) => (
          <path key={`sideways${i}`} className="graph__edge graph__edge--sideways" d={d} />
        ))}
        {paths.arrows.map((d, i) => (
          <path key={`arrows${i}`} className="graph__arrows" d={d} />
        ))}
      </svg>
    </ViewportPortal>
  );
});
