import type { Repository } from '../../store/repository.ts';
import type { Clock, FollowedGroups, NodePool } from '../ports.ts';

/** Where the node groups the pool follows are kept across restarts (NodePool.followGroups). */
const FOLLOWED_GROUPS_KEY = 'nodes.followedGroups';

/**
 * Hands the pool the groups a previous run followed, before its first listing, and stores each change
 * the pool reports as it happens: a replaced group's nodes, paid until gone, are counted after a restart
 * too (the one CloudFormation makes when it points boa at the new group included).
 */
export function followStoredGroups(
  pool: NodePool,
  repo: Pick<Repository, 'getSetting' | 'putSetting'>,
  clock: Clock,
): void {
  pool.followGroups?.(repo.getSetting<FollowedGroups>(FOLLOWED_GROUPS_KEY), (groups) =>
    repo.putSetting(FOLLOWED_GROUPS_KEY, groups, clock.now()),
  );
}
