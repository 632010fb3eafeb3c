// manual_tour.cp: load the VP program into VP 2's code memory and start it
#include "code_block_header.thh"
#define VP_DST_CODE_MEM (1<<31)
#define VP02 2

	scalar SrcOffset = MANUAL_TOUR_OFFSET, DstOffset;
	DstOffset = (0x0 | MANUAL_TOUR_SIZE | VP_DST_CODE_MEM );
	copy_data_block < VP02 , DstOffset , SrcOffset >;

	//wait until the block transfer is complete
	while ( block_transfer_in_progress ) {}

	start <VP02>;
	exit ;
