; isaforge demo firmware: a tiny a6xx SQE program, written for isaforge.
;
; Like real firmware it starts with its version (firmware id 0x6ee: a630) and a NOP whose
; payload is the offset of its packet table, and its boot code loads that table into the
; SQE before waiting for the first packet.
[016ee001]
[#jumptbl]

boot:
        mov $01, 0x830                  ; CP_SQE_INSTR_BASE: where our image sits in memory
        mov $02, 0x2
        cwrite $01, [$00 + @REG_READ_ADDR]
        cwrite $02, [$00 + @REG_READ_DWORDS]
        mov $03, $regdata               ; image address, low half
        mov $04, $regdata               ; image address, high half
        add $05, $03, 0x4               ; dword 1 of the image holds the table offset
        addhi $06, $04, 0x0
        mov $07, 0x1
        cwrite $05, [$00 + @MEM_READ_ADDR]
        cwrite $06, [$00 + @MEM_READ_ADDR+1]
        cwrite $07, [$00 + @MEM_READ_DWORDS]
        and $07, $memdata, 0xffff       ; the NOP's payload: table offset in dwords
        shl $07, $07, 0x2
        add $03, $03, $07               ; 64-bit add: the table's address
        addhi $04, $04, $00
        mov $rem, 0x80                  ; 128 packet handlers
        cwrite $03, [$00 + @MEM_READ_ADDR]
        cwrite $04, [$00 + @MEM_READ_ADDR+1]
        cwrite $rem, [$00 + @MEM_READ_DWORDS]
        cwrite $00, [$00 + @PACKET_TABLE_WRITE_ADDR]
        (rep)cwrite $memdata, [$00 + @PACKET_TABLE_WRITE]
        waitin
        mov $01, $data

; CP_MEM_WRITE: address (lo, hi), then data words written to consecutive dwords
CP_MEM_WRITE:
        mov $addr, 0xa0 << 24           ; |NRT_ADDR
        mov $data, $data
        mov $data, $data
        mov $addr, 0xa204 << 16         ; |NRT_DATA, bit 18: no auto-increment
        (rep)mov $data, $data
        waitin
        mov $01, $data

; type-4 packets: the register is in header bits 8..25, then that many values
; (waitin hands the header over with its type and parity bits cleared)
PKT4:
        ushr $usraddr, $01, 0x8
        (rep)(xmov1)mov $data, $data
        waitin
        mov $01, $data

; CP_SCRATCH_WRITE: a scratch index, then values for control registers 0x100 + index...
CP_SCRATCH_WRITE:
        mov $02, $data
        add $02, $02, 0xff
        (rep)cwrite $data, [$02 + 0x1]!
        waitin
        mov $01, $data

; everything else: skip the payload
CP_NOP:
CP_ME_INIT:
skip:
        breq $rem, 0x0, #done
        nop
        jump #skip
        mov $00, $data
done:
        waitin
        mov $01, $data

jumptbl:
.jumptbl
